import { describe, expect, it } from 'vitest';
import { responseHeaders } from './http-response.js';

describe('responseHeaders', () => {
  it('lower-cases names, joins repeats, keeps Set-Cookie a list, and keeps a __proto__ header a plain key', () => {
    const raw = JSON.parse('{"__proto__": "sneaky", "X-Many": ["1", "2"], "Set-Cookie": "a=1", "Content-Type": "text/plain"}') as Record<
      string,
      string | string[]
    >;
    const headers = responseHeaders(raw);
    expect(Object.getPrototypeOf(headers)).toBe(Object.prototype);
    expect(Object.keys(headers)).toEqual(['__proto__', 'x-many', 'set-cookie', 'content-type']);
    expect(Object.getOwnPropertyDescriptor(headers, '__proto__')?.value).toBe('sneaky');
    expect(headers['x-many']).toBe('1, 2');
    expect(headers['set-cookie']).toEqual(['a=1']);
  });
});
