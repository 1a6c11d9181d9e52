import { createHmac, timingSafeEqual } from 'node:crypto';

/** A form body's parameters, each name with every value it was given (in order). */
export type FormParams = ReadonlyMap<string, readonly string[]>;

export function parseFormParams(body: Buffer): FormParams {
  const params = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
    const values = params.get(name);
    if (values) values.push(value);
    else params.set(name, [value]);
  }
  return params;
}

/**
 * Twilio's request signature: base64 HMAC-SHA1, keyed with the account's auth token, over the
 * URL Twilio was configured with (as the public sees it: SWITCHYARD_BASE_URL + path and query)
 * followed by every POST parameter as name+value, names sorted, a repeated name's distinct
 * values sorted. Sorting is by UTF-16 code units, as Twilio's own libraries sort.
 */
export function twilioSignature(authToken: string, url: string, params: FormParams): string {
  let data = url;
  for (const name of [...params.keys()].sort()) {
    const values = params.get(name)!;
    const ordered = values.length === 1 ? values : [...new Set(values)].sort();
    for (const value of ordered) data += name + value;
  }
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** Constant-time check of a presented `X-Twilio-Signature` (20 bytes, base64). */
export function verifyTwilioSignature(authToken: string, url: string, params: FormParams, presented: string | undefined): boolean {
  const expected = Buffer.from(twilioSignature(authToken, url, params), 'base64');
  const given = typeof presented === 'string' && /^[A-Za-z0-9+/]{27}=$/.test(presented) ? Buffer.from(presented, 'base64') : null;
  if (given === null || given.length !== expected.length) return false;
  return timingSafeEqual(expected, given);
}
