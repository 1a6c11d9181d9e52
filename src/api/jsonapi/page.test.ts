import qs from 'qs';
import { describe, expect, it } from 'vitest';
import { parsePage } from './page.js';
import { expectInvalidParameter } from '../../../test/support/expect-invalid-parameter.js';

const expectInvalidQuery = (query: string, parameter: string, detail: string) =>
  expectInvalidParameter(() => parseQuery(query), parameter, detail);

function parseQuery(query: string) {
  return parsePage(qs.parse(query, { depth: 10, arrayLimit: 100 }).page);
}

describe('parsePage', () => {
  it('defaults to 50 rows from the start without a count', () => {
    expect(parseQuery('')).toEqual({ limit: 50, count: false });
  });

  it('reads limit, offset and count', () => {
    expect(parseQuery('page[limit]=500&page[offset]=0&page[count]=true')).toEqual({ limit: 500, offset: 0, count: true });
    expect(parseQuery('page[limit]=1&page[count]=false')).toEqual({ limit: 1, count: false });
  });

  it('keeps cursors opaque', () => {
    expect(parseQuery('page[after]=abc-_1')).toEqual({ limit: 50, after: 'abc-_1', count: false });
    expect(parseQuery('page[before]=xyz&page[limit]=3')).toEqual({ limit: 3, before: 'xyz', count: false });
  });

  it.each([
    ['page[limit]=0', 'page[limit]', "page[limit] must be a whole number from 1 to 500, got '0'"],
    ['page[limit]=501', 'page[limit]', "page[limit] must be a whole number from 1 to 500, got '501'"],
    ['page[limit]=ten', 'page[limit]', "page[limit] must be a whole number from 1 to 500, got 'ten'"],
    ['page[limit]=2.5', 'page[limit]', "page[limit] must be a whole number from 1 to 500, got '2.5'"],
    ['page[offset]=-1', 'page[offset]', "page[offset] must be a whole number of rows (0 or more), got '-1'"],
    [
      'page[offset]=99999999999999999999',
      'page[offset]',
      "page[offset] must be a whole number of rows (0 or more), got '99999999999999999999'",
    ],
    ['page[count]=yes', 'page[count]', "page[count] takes true or false, got 'yes'"],
    ['page[after]=', 'page[after]', 'page[after] must be a cursor from a links.next or links.prev of this list'],
    ['page[before]=', 'page[before]', 'page[before] must be a cursor from a links.next or links.prev of this list'],
    ['page[after]=a&page[before]=b', 'page[before]', 'page[after] and page[before] cannot be combined; follow one direction at a time'],
    ['page[offset]=5&page[after]=a', 'page[offset]', 'page[offset] cannot be combined with page[after]; use one way of paging'],
    ['page[offset]=5&page[before]=a', 'page[offset]', 'page[offset] cannot be combined with page[before]; use one way of paging'],
    [
      'page[size]=5',
      'page[size]',
      "Unknown page parameter 'page[size]'; use page[limit], page[offset], page[after], page[before], page[count]",
    ],
    ['page[limit]=5&page[limit]=6', 'page[limit]', 'page[limit] takes a single value'],
    ['page=2', 'page', 'page takes page[limit], page[offset], page[after], page[before] and page[count]'],
  ])('refuses %s', (query, parameter, detail) => {
    expectInvalidQuery(query, parameter, detail);
  });
});
