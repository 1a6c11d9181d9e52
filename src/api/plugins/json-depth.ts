import { AppError } from '../../errors/app-error.js';
import { escapePointerToken } from '../../lib/json-pointer.js';

/**
 * How deep a JSON request body may nest arrays and objects, the body itself being level 1.
 *
 * JSON.parse is iterative and takes any depth, but much that follows recurses: JSON.stringify
 * (rows, graphs, inputs, metadata and schemas are stored as JSON text), the unstorable-text
 * walk, the schema compiler. In a request, JSON.stringify overflowed the stack (a 500) from
 * about 4,175 levels on each route that stores what it is given (Node 20, default stack), so
 * 100 leaves a 40x margin. The deepest envelope, a node's config in a sub-folder of a folder
 * import (`{data:{document:{folders:[{workflows:[{graph:{nodes:[{config:`), takes 11 levels,
 * so every value keeps at least 89, itself included (a store row or a run's input 98, a
 * document's metadata in the resource form 97; a store schema keeps its own limit of 64,
 * src/store/row-schema.ts). Webhook deliveries keep their own, larger limit (512,
 * src/webhooks/parse-json-body.ts): their shape is the sender's, not the API's.
 */
export const MAX_BODY_DEPTH = 100;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Where the JSON `text` (already known to parse) first nests deeper than `max`: the JSON Pointer
 * of the array or object that opens level `max + 1`, or null. One pass over the characters with
 * a counter, no recursion and no allocation; strings are skipped with indexOf, so brackets inside
 * them do not count. Only a refused body pays for a second pass that names the pointer. It runs
 * on every JSON:API body, after JSON.parse, and costs a quarter to a half of it: ~3 µs for a
 * 1 KB body, 3 to 7 ms for a 1 MB graph of 4,000 nodes, ~11 µs for 1 MB held in one string
 * (medians of 9 rounds on a loaded 2-core machine, Node 20).
 */
export function findTooDeep(text: string, max: number = MAX_BODY_DEPTH): string | null {
  // Level max + 1 takes max + 1 opening and as many closing brackets.
  if (text.length < 2 * (max + 1)) return null;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = closingQuote(text, i);
    else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > max) return pointerAt(text, i);
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) depth--;
  }
  return null;
}

/** The 400 for a body that nests past the limit, pointing at the array or object that does. */
export function tooDeepError(pointer: string): AppError {
  return new AppError(
    'json_too_deep',
    `the body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels`,
    { pointer },
    {
      meta: { max_depth: MAX_BODY_DEPTH },
    },
  );
}

/** The offset of the quote closing the string opened at `open` (one preceded by an even run of backslashes). */
function closingQuote(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/** The pointer of the value that starts at `offset`, found by walking the text up to it (valid JSON). */
function pointerAt(text: string, offset: number): string {
  // One entry per open container: the member name or index the walk is in.
  const tokens: (string | number)[] = [];
  const inArray: boolean[] = [];
  for (let i = 0; i < offset; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = closingQuote(text, i);
      // A string in an object is a member name when a colon follows it.
      if (inArray.length > 0 && !inArray[inArray.length - 1] && nextSignificant(text, end + 1) === COLON) {
        tokens[tokens.length - 1] = JSON.parse(text.slice(i, end + 1)) as string;
      }
      i = end;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      inArray.push(c === OPEN_BRACKET);
      tokens.push(c === OPEN_BRACKET ? 0 : '');
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      inArray.pop();
      tokens.pop();
    } else if (c === COMMA && inArray[inArray.length - 1]) {
      tokens[tokens.length - 1] = (tokens[tokens.length - 1] as number) + 1;
    }
  }
  return tokens.map((token) => `/${escapePointerToken(String(token))}`).join('');
}

function nextSignificant(text: string, from: number): number {
  let i = from;
  while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  return text.charCodeAt(i);
}
