import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors/app-error.js';

/**
 * Query parameters whose name holds a member of `Object.prototype` (`__proto__`, `constructor`,
 * `toString`, `valueOf`, `hasOwnProperty`, …) as its root or one of its `[…]` parts are 400
 * `invalid_query_parameter`, naming the parameter up to that part (`filter[name][__proto__]`).
 *
 * qs, which parses every query (app.ts), drops such a parameter without a word, so that it cannot
 * replace or shadow the member: `filter[__proto__][eq]=1` or `filter[hasOwnProperty][eq]=1`
 * reached the list as no filter at all, and the unfiltered list was answered. Parsing with
 * `allowPrototypes` would keep `constructor` and the like but still not `__proto__`, and would
 * hand every route and webhook payload objects whose own keys shadow their methods; no API
 * parameter, attribute, relation or operator has such a name, so the raw query is checked
 * instead, here, once for every API route. Webhook deliveries keep qs's behaviour: their query is
 * the sender's, passed on as received.
 */
export function registerQueryNameCheck(app: FastifyInstance): void {
  // After authentication and the body (onRequest, parsing), before schema validation and the
  // handlers, whose list parsers would never see the dropped parameter.
  app.addHook('preValidation', (request, _reply, done) => {
    const found = findPrototypeName(request.url);
    if (found === null) return done();
    done(
      new AppError(
        'invalid_query_parameter',
        `'${found.name}' in ${found.parameter} names a member every JavaScript object has, never an attribute, relation, operator or parameter`,
        { parameter: found.parameter },
      ),
    );
  });
}

export interface PrototypeName {
  /** The parameter as far as the offending part, decoded: `filter[name][__proto__]`. */
  parameter: string;
  name: string;
}

/** The first query parameter of `url` with an `Object.prototype` member for a name part, or null. */
export function findPrototypeName(url: string): PrototypeName | null {
  const start = url.indexOf('?');
  if (start < 0) return null;
  for (const pair of url.slice(start + 1).split('&')) {
    const end = pair.indexOf('=');
    const found = prototypePart(decodeName(end < 0 ? pair : pair.slice(0, end)));
    if (found) return found;
  }
  return null;
}

/**
 * Every run of characters between brackets is a part (qs reads the root up to the first `[`,
 * then each `[…]`); an odd name such as `a]b[c` is split a little more finely than qs would,
 * which can only refuse a name no route takes anyway.
 */
function prototypePart(name: string): PrototypeName | null {
  let from = 0;
  for (;;) {
    let to = from;
    while (to < name.length && name[to] !== '[' && name[to] !== ']') to++;
    const part = name.slice(from, to);
    if (Object.hasOwn(Object.prototype, part)) {
      return { parameter: from === 0 ? part : name.slice(0, name[to] === ']' ? to + 1 : to), name: part };
    }
    if (to >= name.length) return null;
    from = to + 1;
  }
}

/** As qs decodes a name: `+` is a space, percent-escapes are UTF-8, a broken escape stays as sent. */
function decodeName(raw: string): string {
  if (!raw.includes('%') && !raw.includes('+')) return raw;
  const spaced = raw.replaceAll('+', ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}
