import { describe, expect, it } from 'vitest';
import { checkStoreSchema, compileRowSchema, declaredFields, rowValidator, rowViolations } from './row-schema.js';

describe('store schemas', () => {
  it('accepts object schemas with local references, anchors and formats', () => {
    expect(checkStoreSchema({ type: 'object' })).toEqual([]);
    expect(
      checkStoreSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: { money: { type: 'integer', minimum: 0 } },
        properties: {
          amount: { $ref: '#/$defs/money' },
          email: { type: 'string', format: 'email' },
          tags: { enum: [{ $ref: 'http://data.example/not-a-ref' }] },
        },
        required: ['amount'],
      }),
    ).toEqual([]);
  });

  it.each([
    ['not an object', [], [{ pointer: '', detail: 'schema must be a JSON Schema object (2020-12) describing one row' }]],
    ['a boolean schema', true, [{ pointer: '', detail: 'schema must be a JSON Schema object (2020-12) describing one row' }]],
    [
      'no object type',
      { type: 'array' },
      [{ pointer: '/type', detail: 'schema must describe an object: its top-level "type" must be "object"' }],
    ],
    [
      'another draft',
      { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' },
      [
        {
          pointer: '/$schema',
          detail: 'only JSON Schema 2020-12 is supported ("$schema": "https://json-schema.org/draft/2020-12/schema")',
        },
      ],
    ],
    [
      'a remote $ref',
      { type: 'object', properties: { a: { $ref: 'https://json-schema.org/draft/2020-12/schema' } } },
      [{ pointer: '/properties/a/$ref', detail: '$ref must point inside the schema ("#/$defs/…"); remote references are not supported' }],
    ],
    [
      'a relative $ref',
      { type: 'object', properties: { a: { $ref: 'other.json#/x' } } },
      [{ pointer: '/properties/a/$ref', detail: '$ref must point inside the schema ("#/$defs/…"); remote references are not supported' }],
    ],
    [
      'an $id',
      { type: 'object', $defs: { a: { $id: 'urn:example:a' } } },
      [
        {
          pointer: '/$defs/a/$id',
          detail: '$id is not supported: a store schema is self-contained; name parts with $defs and refer to them with "#/$defs/…"',
        },
      ],
    ],
    [
      'a bad type name',
      { type: 'object', properties: { a: { type: 'strnig' } } },
      [
        {
          pointer: '/properties/a/type',
          detail: 'schema at /properties/a/type must be one of "array", "boolean", "integer", "null", "number", "object", "string"',
        },
      ],
    ],
    [
      'a keyword of the wrong type',
      { type: 'object', properties: { a: { minimum: 'x' } } },
      [{ pointer: '/properties/a/minimum', detail: 'schema at /properties/a/minimum must be number' }],
    ],
    [
      'an unknown keyword',
      { type: 'object', properties: { a: { type: 'string', maxLenght: 3 } } },
      [{ pointer: '/properties/a/maxLenght', detail: '"maxLenght" is not a JSON Schema 2020-12 keyword' }],
    ],
    [
      'an unknown format',
      { type: 'object', properties: { a: { type: 'string', format: 'bogus' } } },
      [{ pointer: '', detail: 'schema does not compile: unknown format "bogus" ignored in schema at path "#/properties/a"' }],
    ],
    [
      'a broken local $ref',
      { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } },
      [{ pointer: '', detail: "schema does not compile: can't resolve reference #/$defs/missing from id #" }],
    ],
    [
      'an invalid pattern',
      { type: 'object', properties: { a: { type: 'string', pattern: '(' } } },
      [{ pointer: '', detail: 'schema does not compile: Invalid regular expression: /(/u: Unterminated group' }],
    ],
  ])('refuses %s with a pointer into it', (_case, schema, issues) => {
    expect(checkStoreSchema(schema)).toEqual(issues);
  });

  it('refuses a schema nested too deep, and one too large', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 40; i++) deep = { type: 'object', properties: { a: deep } };
    expect(checkStoreSchema(deep)[0]?.detail).toBe('schema is nested more than 64 levels deep');
    const large = { type: 'object', description: 'x'.repeat(300 * 1024) };
    expect(checkStoreSchema(large)).toEqual([{ pointer: '', detail: 'schema must be at most 256 KiB of JSON' }]);
  });
});

describe('row validation', () => {
  const schema = {
    type: 'object',
    additionalProperties: false,
    required: ['status'],
    properties: {
      status: { enum: ['open', 'paid'] },
      amount: { type: 'integer' },
      'a/b': { type: 'string' },
      items: { type: 'array', items: { type: 'object', properties: { price: { type: 'number', minimum: 0 } } } },
    },
  };

  it('reports one violation per problem with a pointer into the row', () => {
    const validate = compileRowSchema(schema);
    expect(rowViolations(validate, { status: 'paid', amount: 3 })).toEqual([]);
    expect(rowViolations(validate, { amount: 1.5, extra: true, 'a/b': 1, items: [{ price: 1 }, { price: -1 }] })).toEqual([
      { pointer: '/status', detail: 'row.status is required' },
      { pointer: '/extra', detail: "row.extra is not allowed by the store's schema" },
      { pointer: '/amount', detail: 'row.amount must be integer' },
      { pointer: '/a~1b', detail: 'row.a/b must be string' },
      { pointer: '/items/1/price', detail: 'row.items[1].price must be >= 0' },
    ]);
    expect(rowViolations(validate, { status: 'lost' })).toEqual([
      { pointer: '/status', detail: 'row.status must be one of "open", "paid"' },
    ]);
  });

  it('compiles a store version once and keeps it', () => {
    const text = JSON.stringify(schema);
    const first = rowValidator('0190f2a0-0000-7000-8000-00000000000a', 1, text);
    expect(rowValidator('0190f2a0-0000-7000-8000-00000000000a', 1, text)).toBe(first);
    expect(rowValidator('0190f2a0-0000-7000-8000-00000000000a', 2, text)).not.toBe(first);
  });

  it('leaves no schema registered in the shared instance, so equal schemas of two stores do not collide', () => {
    const shared = { type: 'object', $defs: { n: { $anchor: 'n', type: 'integer' } }, properties: { a: { $ref: '#n' } } };
    expect(checkStoreSchema(shared)).toEqual([]);
    expect(checkStoreSchema(structuredClone(shared))).toEqual([]);
    expect(rowViolations(compileRowSchema(structuredClone(shared)), { a: 'x' })).toEqual([
      { pointer: '/a', detail: 'row.a must be integer' },
    ]);
  });
});

describe('declared fields', () => {
  it('offers top-level fields of one scalar type, optionally nullable, and says why others are not', () => {
    const fields = declaredFields({
      type: 'object',
      properties: {
        s: { type: 'string' },
        i: { type: ['integer', 'null'] },
        n: { type: 'number' },
        b: { type: 'boolean' },
        o: { type: 'object' },
        u: { enum: ['x'] },
        m: { type: ['string', 'integer'] },
      },
    });
    expect(fields.get('s')).toEqual({ type: 'string', nullable: false });
    expect(fields.get('i')).toEqual({ type: 'integer', nullable: true });
    expect(fields.get('n')).toEqual({ type: 'number', nullable: false });
    expect(fields.get('b')).toEqual({ type: 'boolean', nullable: false });
    expect(fields.get('o')).toBe('its type is "object", not one of string, integer, number, boolean (optionally with null)');
    expect(fields.get('u')).toBe('it declares no "type"');
    expect(fields.get('m')).toBe('its type is ["string","integer"], not one of string, integer, number, boolean (optionally with null)');
  });
});
