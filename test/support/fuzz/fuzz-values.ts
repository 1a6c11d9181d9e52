import fc from 'fast-check';
import type { Schema } from './openapi-operations.js';

/**
 * Values that have broken HTTP services before: path segments with odd encodings, strings with
 * NUL, surrogates and control characters, numbers at the edges, deep or huge documents.
 */

/**
 * Percent-encodes the UTF-8 of a string, all but RFC 3986's unreserved characters. Unlike
 * encodeURIComponent it never throws: a lone surrogate becomes U+FFFD's bytes, as UTF-8 has it.
 */
export function percentEncode(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Path segments as they are put into the URL (already encoded, or deliberately not). */
export const ODD_SEGMENTS = [
  '',
  '%00',
  '%2F',
  '%2f..%2f',
  '..',
  '.',
  '%2E%2E',
  '%20',
  '%zz',
  '%',
  '%C0%AF',
  '%E2%82',
  '%FF%FE',
  '%ED%A0%80',
  '%0D%0A',
  '%25',
  '%3F',
  '%23',
  encodeURIComponent('ü'),
  encodeURIComponent('工作流'),
  encodeURIComponent('\u{1F600}'.repeat(512)),
  encodeURIComponent('\u{1F600}'.repeat(700)),
  'a'.repeat(8192),
  'a'.repeat(8193),
  'a'.repeat(20_000),
  'null',
  'undefined',
  '-1',
  '0',
  '1e309',
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '0190f2a0-0000-7000-8000-00000000000',
  '0190f2a0-0000-7000-8000-0000000000000',
  '__proto__',
  'constructor',
  encodeURIComponent("' OR 1=1 --"),
  encodeURIComponent('"; DROP TABLE workflows; --'),
  'hook',
  'shape',
];

/** Strings for bodies and query values. */
export const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff\ud800',
  '\u202e',
  '\ufeff',
  '\r\n',
  '%00',
  '\\',
  '"',
  "'",
  '{{ trigger }}',
  '{{ $$ }}',
  '{{ ',
  '0',
  '-0',
  '1e400',
  'NaN',
  'true',
  'null',
  '[]',
  '{}',
  '2026-02-30T00:00:00Z',
  '9999-12-31T23:59:59.999999Z',
  '0000-01-01T00:00:00Z',
  'x'.repeat(1000),
  'é'.repeat(300),
  '\u{1F600}'.repeat(100),
];

export const oddString = fc.oneof(
  fc.constantFrom(...ODD_STRINGS),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 20 }),
);

export const oddNumber = fc.oneof(
  fc.constantFrom(0, -0, -1, 1.5, 2 ** 31, 2 ** 53, -(2 ** 53) - 2, 1e308, -1e308, 5e-324, Number.MAX_SAFE_INTEGER + 2),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** JSON text nested `depth` levels deep (past what JSON.stringify can build on the way). */
export function deepText(depth: number): string {
  return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

/** A JSON document nested `depth` levels deep, of arrays or objects. */
export function deep(depth: number, kind: 'array' | 'object'): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i += 1) value = kind === 'array' ? [value] : { a: value };
  return value;
}

export const oddJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: oddString },
  { weight: 2, arbitrary: oddNumber },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      null,
      true,
      false,
      [],
      {},
      { __proto__: { polluted: true } },
      JSON.parse('{"__proto__":{"polluted":true}}'),
      { constructor: { prototype: { polluted: true } } },
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(deep(60, 'array'), deep(600, 'object'), deep(1000, 'array')) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'x'.repeat(200_000),
      Array.from({ length: 5000 }, (_, i) => i),
    ),
  },
);

/** A value for a JSON Schema, valid for it most of the time; `ids` names uuids worth using. */
export function schemaValue(schema: Schema | undefined, ids: string[]): fc.Arbitrary<unknown> {
  if (!schema) return fc.jsonValue({ maxDepth: 2 });
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (schema.const !== undefined) return fc.constant(schema.const);
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
  const options = types.map((type): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.oneof(fc.integer({ min: -5, max: 2000 }), fc.integer());
      case 'number':
        return fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.integer());
      case 'array':
        return fc.array(schemaValue(schema.items as Schema | undefined, ids), { maxLength: 4 });
      case 'object':
        return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
      default:
        if (schema.format === 'uuid') return ids.length > 0 ? fc.oneof(fc.constantFrom(...ids), fc.uuid()) : fc.uuid();
        if (schema.format === 'date-time')
          return fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
        // The odd strings include NUL and unpaired surrogates, which PostgreSQL cannot store.
        return fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.constantFrom('fuzz workflow', 'ä ö ü', 'x'.repeat(300)), oddString);
    }
  });
  return options.length > 0 ? fc.oneof(...options) : fc.jsonValue({ maxDepth: 2 });
}
