import { afterEach, describe, expect, it } from 'vitest';
import { buildTriggerPayload, parseMediaType, type DeliveryRequest, type TriggerPayload } from './trigger-payload.js';

function deliver(overrides: Partial<DeliveryRequest>) {
  return buildTriggerPayload({ method: 'POST', headers: {}, removeHeaders: [], query: {}, body: Buffer.alloc(0), ...overrides });
}

function payloadOf(overrides: Partial<DeliveryRequest>): TriggerPayload {
  const result = deliver(overrides);
  if (!result.ok) throw new Error(`expected a payload, got: ${result.detail}`);
  return result.payload;
}

/** The body a delivery of `body` bytes with this Content-Type (or none) becomes. */
function bodyOf(contentType: string | undefined, body: string | Buffer): unknown {
  return payloadOf({ headers: contentType === undefined ? {} : { 'content-type': contentType }, body: Buffer.from(body) }).body;
}

afterEach(() => {
  // A hostile test that polluted the prototype would show up in every later one.
  for (const name of ['x', 'polluted', 'admin']) expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain(name);
});

describe('buildTriggerPayload', () => {
  it('builds method, headers, query and body of a JSON delivery', () => {
    expect(
      deliver({
        method: 'post',
        headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-hub-signature-256': 'sha256=abc' },
        removeHeaders: ['x-hub-signature-256'],
        query: { source: 'github' },
        body: Buffer.from('{"ref":"refs/heads/main"}'),
      }),
    ).toEqual({
      ok: true,
      payload: {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-github-event': 'push' },
        query: { source: 'github' },
        body: { ref: 'refs/heads/main' },
      },
    });
  });

  it('upper-cases the method', () => {
    expect(payloadOf({ method: 'patch' }).method).toBe('PATCH');
    expect(payloadOf({ method: 'Put' }).method).toBe('PUT');
  });

  it('copies the query without sharing it', () => {
    const query = { a: '1', list: ['x', 'y'] };
    const payload = payloadOf({ query });
    expect(payload.query).toEqual({ a: '1', list: ['x', 'y'] });
    expect(payload.query).not.toBe(query);
  });

  it('keeps a __proto__ query key as a plain key', () => {
    const payload = payloadOf({ query: JSON.parse('{"__proto__": {"admin": true}}') as Record<string, unknown> });
    expect(Object.keys(payload.query)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(payload.query)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(payload.query, '__proto__')?.value).toEqual({ admin: true });
  });
});

describe('buildTriggerPayload headers', () => {
  it('lower-cases names, joins repeated values with ", " and skips undefined ones', () => {
    expect(
      payloadOf({ headers: { 'X-Request-Id': 'r1', accept: ['text/html', 'application/json'], 'x-none': undefined } }).headers,
    ).toEqual({
      'x-request-id': 'r1',
      accept: 'text/html, application/json',
    });
  });

  it('merges names that differ only in case, in arrival order', () => {
    expect(payloadOf({ headers: { 'X-Tag': 'a', 'x-tag': ['b', 'c'] } }).headers).toEqual({ 'x-tag': 'a, b, c' });
  });

  it('joins repeated Cookie values with "; " and Set-Cookie with ", "', () => {
    expect(payloadOf({ headers: { cookie: ['a=1', 'b=2'], 'set-cookie': ['s=1; Path=/', 't=2'] } }).headers).toEqual({
      cookie: 'a=1; b=2',
      'set-cookie': 's=1; Path=/, t=2',
    });
  });

  it('removes the listed credential headers, whatever the case of the list', () => {
    const headers = { authorization: 'Bearer whk_secret', 'stripe-signature': 't=1,v1=abc', 'user-agent': 'Stripe/1.0' };
    expect(payloadOf({ headers, removeHeaders: ['Authorization', 'stripe-signature'] }).headers).toEqual({ 'user-agent': 'Stripe/1.0' });
  });

  it('keeps Authorization when it is not listed (it was not the credential) and always keeps Cookie', () => {
    const headers = { authorization: 'Basic dXNlcjpwYXNz', cookie: 'session=s1', 'x-signature': 'abc' };
    expect(payloadOf({ headers, removeHeaders: ['x-signature'] }).headers).toEqual({
      authorization: 'Basic dXNlcjpwYXNz',
      cookie: 'session=s1',
    });
  });

  it('keeps a header named __proto__ as a plain key', () => {
    const headers = JSON.parse('{"__proto__": "x", "constructor": "y"}') as Record<string, string>;
    const payload = payloadOf({ headers });
    expect(Object.keys(payload.headers)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(payload.headers)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(payload.headers, '__proto__')?.value).toBe('x');
  });
});

describe('buildTriggerPayload body', () => {
  it.each(['application/json', 'application/x-www-form-urlencoded', 'text/plain', 'image/png', undefined])(
    'is null for an empty body sent as %s',
    (type) => {
      expect(bodyOf(type, '')).toBeNull();
    },
  );

  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON',
    '  application/json  ;  charset="UTF-8" ',
    'application/json;charset=iso-8859-1',
    'application/vnd.api+json',
    'application/cloudevents+json; charset=utf-8',
    'application/VND.GITHUB+JSON',
  ])('parses JSON sent as %j', (type) => {
    expect(bodyOf(type, '{"id":1,"ok":true}')).toEqual({ id: 1, ok: true });
  });

  it('parses any JSON value, not only objects', () => {
    expect(bodyOf('application/json', '[1,"a"]')).toEqual([1, 'a']);
    expect(bodyOf('application/json', '"text"')).toBe('text');
    expect(bodyOf('application/json', 'null')).toBeNull();
  });

  it('parses a UTF-8 JSON body, byte order mark or not', () => {
    expect(bodyOf('application/json', Buffer.from('{"name":"Zoë 😀"}', 'utf8'))).toEqual({ name: 'Zoë 😀' });
    expect(bodyOf('application/json', Buffer.from('\uFEFF{"a":1}', 'utf8'))).toEqual({ a: 1 });
  });

  it('refuses invalid JSON with a located detail, without throwing', () => {
    expect(deliver({ headers: { 'content-type': 'application/json' }, body: Buffer.from('{"a":1,}') })).toEqual({
      ok: false,
      detail: "the request body is not valid JSON: expected a property name, found '}' at line 1, column 8",
    });
    expect(deliver({ headers: { 'content-type': 'application/cloudevents+json' }, body: Buffer.from('{"a":') })).toEqual({
      ok: false,
      detail: 'the request body is not valid JSON: expected a value, found end of input at line 1, column 6',
    });
  });

  it('refuses JSON nested deeper than it can store', () => {
    expect(
      deliver({ headers: { 'content-type': 'application/json' }, body: Buffer.from('['.repeat(10_000) + ']'.repeat(10_000)) }),
    ).toEqual({
      ok: false,
      detail: 'the request body nests JSON deeper than 512 levels',
    });
  });

  it('keeps JSON __proto__ and constructor keys as plain keys without polluting Object.prototype', () => {
    const body = bodyOf('application/json', '{"__proto__": {"x": 1}, "constructor": {"prototype": {"polluted": true}}}') as Record<
      string,
      unknown
    >;
    expect(Object.keys(body)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(body, '__proto__')?.value).toEqual({ x: 1 });
    expect(body.constructor).toEqual({ prototype: { polluted: true } });
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('decodes a form: + is a space, percent escapes decode, a bare name is an empty value', () => {
    expect(bodyOf('application/x-www-form-urlencoded', 'name=Ada+Lovelace&city=Z%C3%BCrich&flag&empty=&a%5Bb%5D=1&bad=%zz')).toEqual({
      name: 'Ada Lovelace',
      city: 'Zürich',
      flag: '',
      empty: '',
      'a[b]': '1',
      bad: '%zz',
    });
  });

  it('turns a repeated form name into an array of its values in order', () => {
    expect(bodyOf('application/x-www-form-urlencoded; charset=UTF-8', 'tag=a&x=1&tag=b&tag=c')).toEqual({ tag: ['a', 'b', 'c'], x: '1' });
  });

  it('keeps a leading "?" of a form body as part of the first name', () => {
    expect(bodyOf('application/x-www-form-urlencoded', '?a=1&b=2')).toEqual({ '?a': '1', b: '2' });
  });

  it('keeps form __proto__ and constructor names as plain keys without polluting Object.prototype', () => {
    const body = bodyOf('application/x-www-form-urlencoded', '__proto__=x&__proto__=y&constructor=z&polluted=1') as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['__proto__', 'constructor', 'polluted']);
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(body, '__proto__')?.value).toEqual(['x', 'y']);
    expect(body.constructor).toBe('z');
    const single = bodyOf('application/x-www-form-urlencoded', '__proto__%5Bpolluted%5D=1&__proto__=x') as Record<string, unknown>;
    expect(Object.keys(single)).toEqual(['__proto__[polluted]', '__proto__']);
    expect(Object.getPrototypeOf(single)).toBe(Object.prototype);
  });

  it.each([
    ['text/plain', 'hello'],
    ['text/csv; charset=utf-8', 'a,b\n1,2'],
    ['TEXT/HTML', '<p>hi</p>'],
    ['application/xml', '<a/>'],
    ['application/atom+xml', '<feed/>'],
    ['application/soap+xml; charset=utf-8', '<Envelope/>'],
  ])('keeps a %s body as its text', (type, text) => {
    expect(bodyOf(type, text)).toBe(text);
  });

  it('decodes text as UTF-8 whatever the charset says, replacing invalid bytes', () => {
    expect(bodyOf('text/plain', Buffer.from([0x61, 0xff, 0x62]))).toBe('a\uFFFDb');
    // 0xE9 is "é" in ISO-8859-1 but not valid UTF-8 on its own.
    expect(bodyOf('text/plain; charset=iso-8859-1', Buffer.from([0x63, 0x61, 0x66, 0xe9]))).toBe('caf\uFFFD');
  });

  it('does not parse JSON sent as text', () => {
    expect(bodyOf('text/plain', '{"a":1}')).toBe('{"a":1}');
    expect(bodyOf('text/json', '{"a":')).toBe('{"a":');
  });

  it.each([
    ['image/png', 'image/png'],
    ['multipart/form-data; boundary=x', 'multipart/form-data; boundary=x'],
    ['application/javascript', 'application/javascript'],
    ['application/octet-stream', 'application/octet-stream'],
    ['application/jsonl', 'application/jsonl'],
    ['json', 'json'],
    ['application / json', 'application / json'],
    ['/json', '/json'],
  ])('keeps a %j body as base64 bytes', (type, contentType) => {
    expect(bodyOf(type, Buffer.from([0x00, 0xff, 0x41]))).toEqual({ content_type: contentType, encoding: 'base64', data: 'AP9B' });
  });

  it('calls a body without a Content-Type (or with a blank one) application/octet-stream', () => {
    expect(bodyOf(undefined, '{"a":1}')).toEqual({ content_type: 'application/octet-stream', encoding: 'base64', data: 'eyJhIjoxfQ==' });
    expect(bodyOf('  ', 'hi')).toEqual({ content_type: 'application/octet-stream', encoding: 'base64', data: 'aGk=' });
  });

  it('reads the type from the first of repeated Content-Type values', () => {
    expect(payloadOf({ headers: { 'content-type': ['application/json', 'text/plain'] }, body: Buffer.from('{"a":1}') }).body).toEqual({
      a: 1,
    });
  });
});

describe('parseMediaType', () => {
  it.each([
    ['application/json', { type: 'application', subtype: 'json' }],
    [' Application/Vnd.Api+JSON ; charset=utf-8', { type: 'application', subtype: 'vnd.api+json' }],
    ['text/plain;charset=utf-8', { type: 'text', subtype: 'plain' }],
    ['\ttext/plain\t', { type: 'text', subtype: 'plain' }],
  ])('reads %j', (value, expected) => {
    expect(parseMediaType(value)).toEqual(expected);
  });

  it.each(['', 'json', '/json', 'application/', 'application/json/x', 'application /json', 'text/plain, application/json', 'a(b)/c'])(
    'refuses %j',
    (value) => {
      expect(parseMediaType(value)).toBeNull();
    },
  );
});
