import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, parseJsonBody } from './parse-json-body.js';

const PREFIX = 'the request body is not valid JSON: ';

describe('parseJsonBody', () => {
  it('parses valid JSON of every kind', () => {
    expect(parseJsonBody('{"a":[1,2.5,"x",true,false,null,{}]}')).toEqual({ ok: true, value: { a: [1, 2.5, 'x', true, false, null, {}] } });
    expect(parseJsonBody(' \t\r\n"text" ')).toEqual({ ok: true, value: 'text' });
    expect(parseJsonBody('-0.5e+2')).toEqual({ ok: true, value: -50 });
  });

  it('ignores one leading byte order mark', () => {
    expect(parseJsonBody('\uFEFF{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseJsonBody('\uFEFF\uFEFF{}')).toEqual({ ok: false, detail: `${PREFIX}expected a value, found '\uFEFF' at line 1, column 1` });
  });

  it('keeps __proto__ as a plain key', () => {
    const result = parseJsonBody('{"__proto__": {"x": 1}}');
    expect(result.ok).toBe(true);
    const value = (result as { value: Record<string, unknown> }).value;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toEqual({ x: 1 });
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it.each([
    ['', 'expected a value, found end of input at line 1, column 1'],
    ['   ', 'expected a value, found end of input at line 1, column 4'],
    ['{"a":}', "expected a value, found '}' at line 1, column 6"],
    ['{"a":1', "expected ',' or '}', found end of input at line 1, column 7"],
    ['[1 2]', "expected ',' or ']', found '2' at line 1, column 4"],
    ['[1,]', "expected a value, found ']' at line 1, column 4"],
    ['[', "expected a value or ']', found end of input at line 1, column 2"],
    [']', "expected a value, found ']' at line 1, column 1"],
    ['{', "expected a property name or '}', found end of input at line 1, column 2"],
    ['{"a":1,}', "expected a property name, found '}' at line 1, column 8"],
    ['{a:1}', "expected a property name or '}', found 'a' at line 1, column 2"],
    ["{'a':1}", "expected a property name or '}', found \"'\" at line 1, column 2"],
    ['{"a" 1}', "expected ':' after a property name, found '1' at line 1, column 6"],
    ['{"a":1}}', "expected the end of the body, found '}' at line 1, column 8"],
    ['1 2', "expected the end of the body, found '2' at line 1, column 3"],
    ['01', "expected the end of the body, found '1' at line 1, column 2"],
    ['{\n  "a": tru\n}', "expected 'true', found U+000A at line 2, column 11"],
    ['nul', "expected 'null', found end of input at line 1, column 4"],
    ['False', "expected a value, found 'F' at line 1, column 1"],
    ['undefined', "expected a value, found 'u' at line 1, column 1"],
    ['NaN', "expected a value, found 'N' at line 1, column 1"],
    ['-', 'expected a digit, found end of input at line 1, column 2'],
    ['-a', "expected a digit, found 'a' at line 1, column 2"],
    ['1.', 'expected a digit, found end of input at line 1, column 3'],
    ['.5', "expected a value, found '.' at line 1, column 1"],
    ['1e+', 'expected a digit, found end of input at line 1, column 4'],
    ['+1', "expected a value, found '+' at line 1, column 1"],
    ['"abc', `expected '"' to close the string, found end of input at line 1, column 5`],
    ['"a\nb"', 'expected a string character (control characters must be escaped), found U+000A at line 1, column 3'],
    ['"\\x"', "expected an escape character (one of \" \\ / b f n r t u), found 'x' at line 1, column 3"],
    ['"\\u12g4"', "expected a hex digit in a \\u escape, found 'g' at line 1, column 6"],
    ['[1,\n 2,\n 😀]', "expected a value, found '😀' at line 3, column 2"],
    ['\uFFFD', 'expected a value, found U+FFFD at line 1, column 1'],
    ['{"a":1}\u0000', 'expected the end of the body, found U+0000 at line 1, column 8'],
  ])('refuses %j: %s', (text, message) => {
    expect(() => JSON.parse(text.replace(/^\uFEFF/, ''))).toThrow(SyntaxError);
    expect(parseJsonBody(text)).toEqual({ ok: false, detail: PREFIX + message });
  });

  it('locates an error for every invalid mutation of valid documents (no generic fallback)', () => {
    const documents = ['{"id":1,"tags":["a","b"],"nested":{"x":-1.5e3,"y":null,"z":true}}', '[{"a":"\\u00e9\\n"},[],{},false]'];
    const alphabet = ['{', '}', '[', ']', ',', ':', '"', '\\', '-', '.', 'e', '0', '1', 't', 'n', ' ', '\n', 'x'];
    let invalid = 0;
    for (const document of documents) {
      for (let at = 0; at <= document.length; at++) {
        const variants = [
          document.slice(0, at) + document.slice(at + 1),
          ...alphabet.map((c) => document.slice(0, at) + c + document.slice(at)),
        ];
        for (const text of variants) {
          let valid = true;
          try {
            JSON.parse(text);
          } catch {
            valid = false;
          }
          const result = parseJsonBody(text);
          expect(result.ok, text).toBe(valid);
          if (!result.ok) {
            invalid++;
            expect(result.detail, text).toMatch(/^the request body is not valid JSON: expected .+, found .+ at line \d+, column \d+$/);
          }
        }
      }
    }
    expect(invalid).toBeGreaterThan(1000);
  });

  it(`accepts JSON nested ${MAX_JSON_DEPTH} levels and refuses one more`, () => {
    const nest = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
    expect(parseJsonBody(nest(MAX_JSON_DEPTH)).ok).toBe(true);
    expect(parseJsonBody(nest(MAX_JSON_DEPTH + 1))).toEqual({ ok: false, detail: 'the request body nests JSON deeper than 512 levels' });
    expect(parseJsonBody(`${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`)).toEqual({
      ok: false,
      detail: 'the request body nests JSON deeper than 512 levels',
    });
  });

  it('refuses 10,000 levels of nesting, which would break JSON.stringify when stored, without throwing', () => {
    const text = '['.repeat(10_000) + ']'.repeat(10_000);
    expect(() => JSON.stringify(JSON.parse(text))).toThrow(RangeError);
    expect(parseJsonBody(text)).toEqual({ ok: false, detail: 'the request body nests JSON deeper than 512 levels' });
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const brackets = '['.repeat(MAX_JSON_DEPTH * 2);
    expect(parseJsonBody(`["${brackets}"]`)).toEqual({ ok: true, value: [brackets] });
    expect(parseJsonBody(`["\\"${brackets}", "\\\\"]`)).toEqual({ ok: true, value: [`"${brackets}`, '\\'] });
  });
});
