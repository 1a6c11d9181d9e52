import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterEach, describe, expect, it } from 'vitest';
import {
  MAX_FORMAT_LENGTH,
  MAX_SHAPE_DEPTH,
  MAX_SHAPE_ITEMS,
  MAX_SHAPE_PROPERTIES,
  MAX_SHAPE_VALUES,
  describeShape,
  mergeShapes,
  type Shape,
} from './describe-shape.js';

const INTEGER: Shape = { type: 'integer' };
const NUMBER: Shape = { type: 'number' };
const STRING: Shape = { type: 'string' };
const NULL: Shape = { type: 'null' };
const BOOLEAN: Shape = { type: 'boolean' };

/** n arrays around `inner`: nestArrays(2, 1) is [[1]]. */
function nestArrays(levels: number, inner: unknown): unknown {
  let value = inner;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

function objectWithKeys(count: number, prefix = 'k'): Record<string, number> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, i]));
}

afterEach(() => {
  // A hostile test that polluted the prototype would show up in every later one.
  expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('x');
  expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
});

describe('describeShape on scalars', () => {
  it('names null, booleans and strings by their JSON type', () => {
    expect(describeShape(null)).toEqual(NULL);
    expect(describeShape(true)).toEqual(BOOLEAN);
    expect(describeShape(false)).toEqual(BOOLEAN);
    expect(describeShape('')).toEqual(STRING);
    expect(describeShape('hello')).toEqual(STRING);
  });

  it('calls whole numbers integer and the others number', () => {
    expect(describeShape(0)).toEqual(INTEGER);
    expect(describeShape(-3)).toEqual(INTEGER);
    expect(describeShape(1e300)).toEqual(INTEGER);
    expect(describeShape(JSON.parse('2.0'))).toEqual(INTEGER);
    expect(describeShape(1.5)).toEqual(NUMBER);
    expect(describeShape(-0.001)).toEqual(NUMBER);
  });

  it('says nothing ({}) about values JSON cannot hold', () => {
    expect(describeShape(undefined)).toEqual({});
    expect(describeShape(10n)).toEqual({});
    expect(describeShape(() => 1)).toEqual({});
    expect(describeShape(Symbol('s'))).toEqual({});
  });
});

describe('describeShape string formats', () => {
  it.each([
    ['2024-01-15T10:30:00Z', 'date-time'],
    ['2024-01-15T10:30:00.123456+02:00', 'date-time'],
    ['2024-01-15t10:30:00z', 'date-time'],
    ['2024-02-29T00:00:00-11:30', 'date-time'],
    ['2000-02-29T00:00:00Z', 'date-time'],
    ['2016-12-31T23:59:60Z', 'date-time'],
    ['ada@example.com', 'email'],
    ['first.last+tag@mail.example.co.uk', 'email'],
    ['https://example.com', 'uri'],
    ['http://localhost:8080/hooks?x=1&y=%20#top', 'uri'],
    ['HTTPS://EXAMPLE.COM/', 'uri'],
    ['123e4567-e89b-12d3-a456-426614174000', 'uuid'],
    ['123E4567-E89B-12D3-A456-426614174000', 'uuid'],
    ['00000000-0000-0000-0000-000000000000', 'uuid'],
  ])('%s is a %s string', (value, format) => {
    expect(describeShape(value)).toEqual({ type: 'string', format });
  });

  it.each([
    ['2024-01-15', 'a date alone'],
    ['10:30:00Z', 'a time alone'],
    ['2024-01-15T10:30:00', 'no offset'],
    ['2024-01-15 10:30:00Z', 'a space separator'],
    ['2024-01-15T10:30Z', 'no seconds'],
    ['2023-02-29T00:00:00Z', 'February 29 of a common year'],
    ['1900-02-29T00:00:00Z', 'February 29 of a century that is not a leap year'],
    ['2024-04-31T00:00:00Z', 'April 31'],
    ['2024-13-01T00:00:00Z', 'month 13'],
    ['2024-00-10T00:00:00Z', 'month 0'],
    ['2024-01-00T00:00:00Z', 'day 0'],
    ['2024-01-15T24:00:00Z', 'hour 24'],
    ['2024-01-15T10:60:00Z', 'minute 60'],
    ['2024-01-15T10:30:61Z', 'second 61'],
    ['2024-01-15T10:30:00+24:00', 'offset hour 24'],
    ['2024-01-15T10:30:00+02:60', 'offset minute 60'],
    ['ada@localhost', 'an email host without a dot'],
    ['.ada@example.com', 'a leading dot in the local part'],
    ['ada..lovelace@example.com', 'a doubled dot in the local part'],
    ['ada@@example.com', 'two @'],
    ['Ada <ada@example.com>', 'a display name'],
    ['ada@-example.com', 'a host label starting with a hyphen'],
    ['mailto:ada@example.com', 'a mailto URI'],
    ['ftp://example.com', 'a non-http scheme'],
    ['http://', 'no host'],
    ['http:example.com', 'no slashes'],
    ['example.com/path', 'no scheme'],
    [' https://example.com', 'leading whitespace'],
    ['https://exa mple.com', 'inner whitespace'],
    ['https://exa\tmple.com', 'a tab the URL parser would strip'],
    ['https://exämple.com', 'raw non-ASCII (an IRI)'],
    ['https://[::1', 'an unclosed IPv6 host'],
    ['https://example.com:99999', 'a port out of range'],
    ['123e4567e89b12d3a456426614174000', 'a uuid without hyphens'],
    ['{123e4567-e89b-12d3-a456-426614174000}', 'a uuid in braces'],
    ['urn:uuid:123e4567-e89b-12d3-a456-426614174000', 'a uuid URN'],
    ['123e4567-e89b-12d3-a456-42661417400g', 'a non-hex uuid digit'],
  ])('%j is a plain string: %s', (value) => {
    expect(describeShape(value)).toEqual(STRING);
  });

  it(`gives no format to strings longer than ${MAX_FORMAT_LENGTH} characters`, () => {
    const base = 'https://example.com/?q=';
    expect(describeShape(base + 'a'.repeat(MAX_FORMAT_LENGTH - base.length))).toEqual({ type: 'string', format: 'uri' });
    expect(describeShape(base + 'a'.repeat(MAX_FORMAT_LENGTH - base.length + 1))).toEqual(STRING);
  });

  it('checks a long hostile email-like string quickly', () => {
    const started = performance.now();
    expect(describeShape('a'.repeat(1000) + '@' + 'a-'.repeat(500))).toEqual(STRING);
    expect(describeShape(`${'a.'.repeat(1000)}@x`)).toEqual(STRING);
    expect(performance.now() - started).toBeLessThan(50);
  });
});

describe('describeShape on objects', () => {
  it('lists every key as a property and as required, in key order', () => {
    expect(describeShape({ id: 7, email: 'ada@example.com', tags: null })).toEqual({
      type: 'object',
      properties: { id: INTEGER, email: { type: 'string', format: 'email' }, tags: NULL },
      required: ['id', 'email', 'tags'],
    });
    expect(Object.keys(describeShape({ b: 1, a: 2 }).properties!)).toEqual(['b', 'a']);
  });

  it('describes an empty object with no properties', () => {
    expect(describeShape({})).toEqual({ type: 'object', properties: {}, required: [] });
  });

  it('describes nested objects', () => {
    expect(describeShape({ repository: { owner: { login: 'ada' } } })).toEqual({
      type: 'object',
      properties: {
        repository: {
          type: 'object',
          properties: { owner: { type: 'object', properties: { login: STRING }, required: ['login'] } },
          required: ['owner'],
        },
      },
      required: ['repository'],
    });
  });

  it(`describes the first ${MAX_SHAPE_PROPERTIES} properties and marks the rest as additionalProperties`, () => {
    const shape = describeShape(objectWithKeys(1500));
    const kept = Array.from({ length: MAX_SHAPE_PROPERTIES }, (_, i) => `k${i}`);
    expect(shape).toEqual({
      type: 'object',
      properties: Object.fromEntries(kept.map((key) => [key, INTEGER])),
      required: kept,
      additionalProperties: true,
    });
  });

  it(`does not mark an object of exactly ${MAX_SHAPE_PROPERTIES} properties`, () => {
    expect(describeShape(objectWithKeys(MAX_SHAPE_PROPERTIES))).not.toHaveProperty('additionalProperties');
  });

  it('keeps __proto__ and constructor as plain property names without polluting Object.prototype', () => {
    const sample = JSON.parse('{"__proto__": {"x": 1}, "constructor": {"prototype": {"polluted": true}}}') as unknown;
    const shape = describeShape(sample);
    expect(Object.keys(shape.properties!)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(shape.properties)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(shape.properties, '__proto__')?.value).toEqual({
      type: 'object',
      properties: { x: INTEGER },
      required: ['x'],
    });
    expect(shape.required).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('keeps __proto__ a plain key when merging objects in an array', () => {
    const shape = describeShape(JSON.parse('[{"__proto__": {"x": 1}}, {"__proto__": {"x": 2.5}, "a": true}]'));
    const properties = shape.items!.properties!;
    expect(Object.keys(properties)).toEqual(['__proto__', 'a']);
    expect(Object.getOwnPropertyDescriptor(properties, '__proto__')?.value).toEqual({
      type: 'object',
      properties: { x: NUMBER },
      required: ['x'],
    });
    expect(shape.items!.required).toEqual(['__proto__']);
  });
});

describe('describeShape on arrays', () => {
  it('gives an empty array no items', () => {
    expect(describeShape([])).toEqual({ type: 'array' });
  });

  it('merges the shapes of all elements into items', () => {
    expect(describeShape([1, 2, 3])).toEqual({ type: 'array', items: INTEGER });
    expect(describeShape([1, 2.5, 3])).toEqual({ type: 'array', items: NUMBER });
    expect(describeShape([true, false])).toEqual({ type: 'array', items: BOOLEAN });
  });

  it('keeps a format shared by every string and drops one that differs', () => {
    expect(describeShape(['a@example.com', 'b@example.com'])).toEqual({ type: 'array', items: { type: 'string', format: 'email' } });
    expect(describeShape(['a@example.com', 'https://example.com'])).toEqual({ type: 'array', items: STRING });
    expect(describeShape(['a@example.com', 'plain'])).toEqual({ type: 'array', items: STRING });
    expect(describeShape(['plain', 'a@example.com'])).toEqual({ type: 'array', items: STRING });
  });

  it('unions different types with anyOf, in order of first appearance, once per type', () => {
    expect(describeShape([1, 'a', 2, null, 'b', 1.5, true])).toEqual({
      type: 'array',
      items: { anyOf: [NUMBER, STRING, NULL, BOOLEAN] },
    });
    expect(describeShape([null, { a: 1 }])).toEqual({
      type: 'array',
      items: { anyOf: [NULL, { type: 'object', properties: { a: INTEGER }, required: ['a'] }] },
    });
  });

  it('merges objects: union of properties, required only when present in every element', () => {
    expect(
      describeShape([
        { id: 1, name: 'a' },
        { id: 2, email: 'b@example.com' },
        { id: 3.5, name: null },
      ]),
    ).toEqual({
      type: 'array',
      items: {
        type: 'object',
        properties: { id: NUMBER, name: { anyOf: [STRING, NULL] }, email: { type: 'string', format: 'email' } },
        required: ['id'],
      },
    });
  });

  it('merges objects inside a union with the object branch', () => {
    expect(describeShape([{ a: 1 }, 'x', { b: 2 }, 'y'])).toEqual({
      type: 'array',
      items: { anyOf: [{ type: 'object', properties: { a: INTEGER, b: INTEGER }, required: [] }, STRING] },
    });
  });

  it('merges nested arrays element-wise, an empty one adding nothing', () => {
    expect(describeShape([[1], ['a'], []])).toEqual({ type: 'array', items: { type: 'array', items: { anyOf: [INTEGER, STRING] } } });
    expect(describeShape([[], [1]])).toEqual({ type: 'array', items: { type: 'array', items: INTEGER } });
    expect(describeShape([[], []])).toEqual({ type: 'array', items: { type: 'array' } });
  });

  it(`samples only the first ${MAX_SHAPE_ITEMS} elements`, () => {
    const sample: unknown[] = Array.from({ length: MAX_SHAPE_ITEMS }, (_, i) => i);
    expect(describeShape([...sample, 'late'])).toEqual({ type: 'array', items: INTEGER });
    expect(describeShape([...sample.slice(1), 'last sampled'])).toEqual({ type: 'array', items: { anyOf: [INTEGER, STRING] } });
  });

  it(`caps a merged union of properties at ${MAX_SHAPE_PROPERTIES}`, () => {
    const shape = describeShape([objectWithKeys(600, 'a'), objectWithKeys(600, 'b')]);
    const keys = Object.keys(shape.items!.properties!);
    expect(keys).toHaveLength(MAX_SHAPE_PROPERTIES);
    expect(keys.slice(598, 602)).toEqual(['a598', 'a599', 'b0', 'b1']);
    expect(keys.at(-1)).toBe('b399');
    expect(shape.items!.required).toEqual([]);
    expect(shape.items!.additionalProperties).toBe(true);
  });

  it('keeps additionalProperties when one merged element was capped', () => {
    const shape = describeShape([{ k0: 1 }, objectWithKeys(MAX_SHAPE_PROPERTIES + 1)]);
    expect(shape.items!.additionalProperties).toBe(true);
    expect(shape.items!.required).toEqual(['k0']);
  });
});

describe('describeShape depth limit', () => {
  it(`describes values down to depth ${MAX_SHAPE_DEPTH} and gives {} below`, () => {
    expect(describeShape(nestArrays(MAX_SHAPE_DEPTH, 1))).toEqual(expectedArrays(MAX_SHAPE_DEPTH, INTEGER));
    expect(describeShape(nestArrays(MAX_SHAPE_DEPTH + 1, 1))).toEqual(expectedArrays(MAX_SHAPE_DEPTH + 1, {}));
  });

  it('describes 10,000 nested arrays without throwing, cut at the depth limit', () => {
    expect(describeShape(nestArrays(10_000, 1))).toEqual(expectedArrays(MAX_SHAPE_DEPTH + 1, {}));
  });

  it('describes 10,000 nested objects without throwing, cut at the depth limit', () => {
    let sample: unknown = 1;
    for (let i = 0; i < 10_000; i++) sample = { a: sample };
    let expected: Shape = {};
    for (let i = 0; i <= MAX_SHAPE_DEPTH; i++) expected = { type: 'object', properties: { a: expected }, required: ['a'] };
    expect(describeShape(sample)).toEqual(expected);
  });

  it('describes 10,000 levels of JSON text parsed by JSON.parse', () => {
    const text = '['.repeat(10_000) + ']'.repeat(10_000);
    expect(describeShape(JSON.parse(text))).toEqual(expectedArrays(MAX_SHAPE_DEPTH + 1, {}));
  });

  it('terminates on a cyclic object, which JSON cannot hold', () => {
    const cyclic: Record<string, unknown> = { n: 1 };
    cyclic.self = cyclic;
    const shape = describeShape(cyclic);
    let depth = 0;
    for (let node: Shape | undefined = shape; node?.type === 'object'; node = node.properties?.self) depth++;
    expect(depth).toBe(MAX_SHAPE_DEPTH + 1);
  });
});

describe('describeShape value budget', () => {
  it(`stops sampling and listing properties after ${MAX_SHAPE_VALUES} values`, () => {
    expect(MAX_SHAPE_VALUES).toBe(20_000);
    // 1 for the array, then 1 + 1,000 per object: 19 whole objects use 19,020, the 20th gets
    // itself plus 979 keys, and the array stops there.
    const shape = describeShape(Array.from({ length: 100 }, () => objectWithKeys(1000)));
    const keys = Array.from({ length: 1000 }, (_, i) => `k${i}`);
    expect(shape).toEqual({
      type: 'array',
      items: {
        type: 'object',
        properties: Object.fromEntries(keys.map((key) => [key, INTEGER])),
        required: keys.slice(0, 979),
        additionalProperties: true,
      },
    });
  });

  it('describes a value that shares its sub-arrays (3^30 paths) quickly and exactly', () => {
    let shared: unknown = 1;
    for (let i = 0; i < 30; i++) shared = [shared, shared, shared];
    const started = performance.now();
    expect(describeShape(shared)).toEqual(expectedArrays(30, INTEGER));
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('lets an array reached with no budget left add nothing to its siblings', () => {
    // The first element uses 1 + 19 * 1,001 + 978 = 19,998 values, the root 1: the second
    // element gets the last one, for itself, and none for its elements.
    const first = [...Array.from({ length: 19 }, () => objectWithKeys(1000)), objectWithKeys(977)];
    const shape = describeShape([first, [1, 2]]);
    const keys = Array.from({ length: 1000 }, (_, i) => `k${i}`);
    expect(shape.items).toEqual({
      type: 'array',
      items: { type: 'object', properties: Object.fromEntries(keys.map((key) => [key, INTEGER])), required: keys.slice(0, 977) },
    });
    expect(describeShape([[1, 2]])).toEqual({ type: 'array', items: { type: 'array', items: INTEGER } });
  });
});

/** The shape of n nested arrays whose innermost element has shape `inner`. */
function expectedArrays(levels: number, inner: Shape): Shape {
  let shape = inner;
  for (let i = 0; i < levels; i++) shape = { type: 'array', items: shape };
  return shape;
}

describe('mergeShapes', () => {
  it('merges integer with number into number, integer with integer into integer', () => {
    expect(mergeShapes(INTEGER, NUMBER)).toEqual(NUMBER);
    expect(mergeShapes(NUMBER, INTEGER)).toEqual(NUMBER);
    expect(mergeShapes(INTEGER, INTEGER)).toEqual(INTEGER);
  });

  it('merges two unions branch by branch without duplicates', () => {
    expect(mergeShapes({ anyOf: [INTEGER, STRING] }, { anyOf: [NULL, NUMBER, { type: 'string', format: 'uuid' }] })).toEqual({
      anyOf: [NUMBER, STRING, NULL],
    });
  });

  it('merges any number of shapes at once, as folding them pairwise would', () => {
    const shapes: Shape[] = [
      INTEGER,
      { type: 'object', properties: { a: STRING }, required: ['a'] },
      NULL,
      NUMBER,
      { type: 'object', properties: { b: NULL }, required: ['b'] },
    ];
    const pairwise = shapes.slice(1).reduce((merged, shape) => mergeShapes(merged, shape), shapes[0]!);
    expect(mergeShapes(shapes[0]!, ...shapes.slice(1))).toEqual(pairwise);
    expect(pairwise).toEqual({ anyOf: [NUMBER, { type: 'object', properties: { a: STRING, b: NULL }, required: [] }, NULL] });
  });

  it('returns {} when either side is {}', () => {
    expect(mergeShapes({}, INTEGER)).toEqual({});
    expect(mergeShapes({ anyOf: [INTEGER, STRING] }, {})).toEqual({});
  });
});

describe('describeShape as a JSON Schema', () => {
  // ownProperties: by default ajv reads `data.constructor` through the prototype, so an object
  // without a "constructor" key would fail a `constructor: {type: integer}` property.
  const ajv = new Ajv2020({ strict: true, ownProperties: true });
  addFormats.default(ajv);

  /** Deterministic (mulberry32), so a failure can be replayed. */
  function random(seed: number): () => number {
    let state = seed;
    return () => {
      state = (state + 0x6d2b79f5) | 0;
      let t = Math.imul(state ^ (state >>> 15), 1 | state);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  const STRINGS = [
    '',
    'x',
    'ada@example.com',
    'https://example.com/a',
    '2024-01-15T10:30:00Z',
    '123e4567-e89b-12d3-a456-426614174000',
    '__proto__',
  ];
  const KEYS = ['a', 'b', 'c', 'id', '__proto__', 'constructor'];

  function sample(next: () => number, depth: number): unknown {
    const pick = Math.floor(next() * (depth > 6 ? 5 : 7));
    switch (pick) {
      case 0:
        return null;
      case 1:
        return next() < 0.5;
      case 2:
        return next() < 0.5 ? Math.floor(next() * 100) : next() * 100;
      case 3:
      case 4:
        return STRINGS[Math.floor(next() * STRINGS.length)];
      case 5:
        return Array.from({ length: Math.floor(next() * 4) }, () => sample(next, depth + 1));
      default:
        return Object.fromEntries(
          Array.from({ length: Math.floor(next() * 4) }, () => [KEYS[Math.floor(next() * KEYS.length)], sample(next, depth + 1)]),
        );
    }
  }

  it('accepts the sample it was made from (2,000 generated JSON values)', () => {
    const next = random(20240115);
    for (let i = 0; i < 2000; i++) {
      const value = JSON.parse(JSON.stringify(sample(next, 0))) as unknown;
      const shape = describeShape(value);
      const valid = ajv.validate(shape, value);
      expect({ value, shape, valid, errors: ajv.errors }).toMatchObject({ valid: true });
    }
  });
});
