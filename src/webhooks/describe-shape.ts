/**
 * A JSON-Schema-like description of a captured sample payload, shown as the webhook step's
 * sample output shape.
 *
 * Terminology:
 * - shape: a JSON Schema subset. `{}` means "anything": a value below the depth limit, a value
 *   JSON cannot hold, or a union that includes either. `{type: 'array'}` without `items` is an
 *   empty array, or one whose elements the value budget left unread.
 * - kind: what merging groups by; integer and number are one kind, every other type its own.
 * - union: `{anyOf: [...]}` with at most one branch per kind, in order of first appearance. It
 *   is used for every union, scalar or not, so a reader handles a single form.
 *
 * Bounds (the MAX_SHAPE_* constants): recursion at most MAX_SHAPE_DEPTH deep and work bounded
 * by MAX_SHAPE_VALUES, plus listing the keys of each object visited, which V8 cannot do
 * partially: 0.5 s for one object of a million keys, half of what JSON.parse took to build it.
 */

export const SHAPE_TYPES = ['null', 'boolean', 'integer', 'number', 'string', 'object', 'array'] as const;
export type ShapeType = (typeof SHAPE_TYPES)[number];

export const STRING_FORMATS = ['date-time', 'email', 'uri', 'uuid'] as const;
export type StringFormat = (typeof STRING_FORMATS)[number];

export interface Shape {
  type?: ShapeType;
  format?: StringFormat;
  properties?: Record<string, Shape>;
  required?: string[];
  /** Present (true) only when properties were left out, by MAX_SHAPE_PROPERTIES or the value budget. */
  additionalProperties?: true;
  items?: Shape;
  anyOf?: Shape[];
}

/** Values nested deeper than this (the root is depth 0) are `{}`; payloads are stored whole, this only bounds the description. */
export const MAX_SHAPE_DEPTH = 32;
/** Properties described per object, in key order; the rest become `additionalProperties: true`. Also caps a merged union. */
export const MAX_SHAPE_PROPERTIES = 1000;
/** Elements of an array that are sampled for `items`. */
export const MAX_SHAPE_ITEMS = 100;
/** Longer strings get no format: none of the four formats is clearly this long, and it bounds the regex work. */
export const MAX_FORMAT_LENGTH = 2048;

/**
 * Values described per call, scalars included. Past it arrays stop sampling (an array reached
 * with none left gets no `items`, which merges as "no information" where `{}` would swallow
 * its siblings) and objects stop listing properties (marked `additionalProperties`). The work
 * is then bounded even for a value that shares sub-objects (a DAG describes as a tree of 3^30
 * nodes). Measured on Node 20: 20,000 values take 50 ms warm, 120 ms cold (100 objects
 * of 1,000 keys); a GitHub push payload (about 300 values) 0.5 ms.
 */
export const MAX_SHAPE_VALUES = 20_000;

interface Budget {
  remaining: number;
}

export function describeShape(value: unknown): Shape {
  return describeAt(value, 0, { remaining: MAX_SHAPE_VALUES });
}

/** Callers check that budget remains. */
function describeAt(value: unknown, depth: number, budget: Budget): Shape {
  budget.remaining--;
  if (depth > MAX_SHAPE_DEPTH) return {};
  if (value === null) return { type: 'null' };
  switch (typeof value) {
    case 'boolean':
      return { type: 'boolean' };
    case 'number':
      return { type: Number.isInteger(value) ? 'integer' : 'number' };
    case 'string': {
      const format = detectFormat(value);
      return format ? { type: 'string', format } : { type: 'string' };
    }
    case 'object':
      return Array.isArray(value) ? describeArray(value, depth, budget) : describeObject(value as Record<string, unknown>, depth, budget);
    default:
      // undefined, bigint, symbol, function: not JSON, so nothing useful can be said.
      return {};
  }
}

function describeArray(value: unknown[], depth: number, budget: Budget): Shape {
  const elements: Shape[] = [];
  const sampled = Math.min(value.length, MAX_SHAPE_ITEMS);
  for (let i = 0; i < sampled && budget.remaining > 0; i++) elements.push(describeAt(value[i], depth + 1, budget));
  return elements.length > 0 ? { type: 'array', items: mergeList(elements) } : { type: 'array' };
}

function describeObject(value: Record<string, unknown>, depth: number, budget: Budget): Shape {
  const keys = Object.keys(value);
  const properties = new Map<string, Shape>();
  for (const key of keys) {
    if (properties.size === MAX_SHAPE_PROPERTIES || budget.remaining <= 0) break;
    properties.set(key, describeAt(value[key], depth + 1, budget));
  }
  // Object.fromEntries defines own properties: a "__proto__" key stays a key.
  const shape: Shape = { type: 'object', properties: Object.fromEntries(properties), required: [...properties.keys()] };
  if (properties.size < keys.length) shape.additionalProperties = true;
  return shape;
}

/** The shape of a value that matches any of `shapes`. */
export function mergeShapes(first: Shape, ...rest: Shape[]): Shape {
  return mergeList([first, ...rest]);
}

/**
 * All at once rather than pairwise: each input node is visited once, where folding 100 array
 * elements pair by pair re-copied the growing result each time (a 100x100x100 grid of small
 * objects, 11 MB of JSON, took 12 s that way). Recursion follows the shapes, which are at most
 * MAX_SHAPE_DEPTH + 1 deep.
 */
function mergeList(shapes: Shape[]): Shape {
  const groups = new Map<string, Shape[]>();
  for (const shape of shapes) {
    for (const branch of shape.anyOf ?? [shape]) {
      const kind = kindOf(branch);
      const group = groups.get(kind);
      if (group) group.push(branch);
      else groups.set(kind, [branch]);
    }
  }
  if (groups.has('any') || groups.size === 0) return {};
  const merged = [...groups.values()].map(mergeSameKind);
  return merged.length === 1 ? merged[0]! : { anyOf: merged };
}

function kindOf(shape: Shape): string {
  if (shape.type === undefined) return 'any';
  return shape.type === 'integer' ? 'number' : shape.type;
}

/** `group` is non-empty and of one kind. */
function mergeSameKind(group: Shape[]): Shape {
  const first = group[0]!;
  switch (first.type) {
    case 'integer':
    case 'number':
      return { type: group.every((shape) => shape.type === 'integer') ? 'integer' : 'number' };
    case 'string': {
      const format = first.format;
      return format !== undefined && group.every((shape) => shape.format === format) ? { type: 'string', format } : { type: 'string' };
    }
    case 'array': {
      const items = group.flatMap((shape) => (shape.items ? [shape.items] : []));
      return items.length > 0 ? { type: 'array', items: mergeList(items) } : { type: 'array' };
    }
    case 'object':
      return mergeObjects(group);
    default:
      return first;
  }
}

/** Union of properties in first-appearance order (capped), required = keys every object requires. */
function mergeObjects(group: Shape[]): Shape {
  const properties = new Map<string, Shape[]>();
  const requiredBy = new Map<string, number>();
  let additional = false;
  for (const shape of group) {
    for (const [key, property] of Object.entries(shape.properties ?? {})) {
      const seen = properties.get(key);
      if (seen) seen.push(property);
      else if (properties.size < MAX_SHAPE_PROPERTIES) properties.set(key, [property]);
      else additional = true;
    }
    for (const key of shape.required ?? []) requiredBy.set(key, (requiredBy.get(key) ?? 0) + 1);
    if (shape.additionalProperties) additional = true;
  }
  const merged: Shape = {
    type: 'object',
    properties: Object.fromEntries([...properties].map(([key, shapes]) => [key, mergeList(shapes)])),
    required: [...properties.keys()].filter((key) => requiredBy.get(key) === group.length),
  };
  if (additional) merged.additionalProperties = true;
  return merged;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** RFC 3339 section 5.6 date-time: a T (or t) separator and a mandatory offset. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;
/**
 * Dot-atom local part (RFC 5322, no leading, trailing or doubled dot) and a host name with at
 * least one dot: "user@localhost" or quoted local parts are not clearly an email.
 */
const EMAIL =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
/**
 * Only RFC 3986 characters (so no whitespace, which the URL parser would silently strip, and
 * no raw non-ASCII: that is an IRI); URL.canParse then checks the structure (host, port).
 */
const HTTP_URL = /^https?:\/\/[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/i;

function detectFormat(value: string): StringFormat | undefined {
  if (value.length > MAX_FORMAT_LENGTH) return undefined;
  if (UUID.test(value)) return 'uuid';
  if (isDateTime(value)) return 'date-time';
  if (EMAIL.test(value)) return 'email';
  if (HTTP_URL.test(value) && URL.canParse(value)) return 'uri';
  return undefined;
}

function isDateTime(value: string): boolean {
  const match = DATE_TIME.exec(value);
  if (!match) return false;
  // An absent offset group ("Z") reads as 0.
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, offsetHour = 0, offsetMinute = 0] = match
    .slice(1)
    .map((part) => Number(part ?? 0));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  // Second 60 is a leap second, which RFC 3339 allows.
  return hour <= 23 && minute <= 59 && second <= 60 && offsetHour <= 23 && offsetMinute <= 59;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
