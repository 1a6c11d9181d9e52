import { describe, expect, it } from 'vitest';
import { acceptsJsonApi, acceptsOneOf } from './media-type.js';

describe('acceptsOneOf', () => {
  it('admits a type by itself, by its type wildcard and by the any-type range, and any type without an Accept header', () => {
    for (const accept of [
      undefined,
      '',
      'text/csv',
      'TEXT/CSV',
      'text/*',
      '*/*',
      'application/json, text/csv;q=0.2',
      'text/csv; charset=utf-8',
    ]) {
      expect(acceptsOneOf(accept, ['text/csv']), String(accept)).toBe(true);
    }
    expect(acceptsOneOf('application/x-ndjson', ['text/csv', 'application/x-ndjson'])).toBe(true);
  });

  it('refuses unrelated types and ranges, and a type whose most specific range has quality zero', () => {
    for (const accept of [
      'application/json',
      'application/*',
      'application/vnd.api+json',
      'text/csv;q=0',
      'text/csv;q=0, */*',
      'text/*;q=0, */*',
      'text/html',
    ]) {
      expect(acceptsOneOf(accept, ['text/csv']), accept).toBe(false);
    }
    // A more specific range than the refusing one decides.
    expect(acceptsOneOf('text/*;q=0, text/csv', ['text/csv'])).toBe(true);
  });
});

describe('acceptsJsonApi', () => {
  it('keeps its rules: JSON:API without parameters, the wildcards, and application/json on plain-JSON routes only', () => {
    expect(acceptsJsonApi('application/vnd.api+json', false)).toBe(true);
    expect(acceptsJsonApi('application/vnd.api+json; ext=x', false)).toBe(false);
    expect(acceptsJsonApi('application/*', false)).toBe(true);
    expect(acceptsJsonApi('application/json', false)).toBe(false);
    expect(acceptsJsonApi('application/json', true)).toBe(true);
    expect(acceptsJsonApi('text/csv', true)).toBe(false);
  });
});
