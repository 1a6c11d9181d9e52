import { describe, expect, it } from 'vitest';
import { expectInvalidParameter } from '../../../test/support/expect-invalid-parameter.js';
import { FeedCursors } from './feed-cursor.js';

const STORE = '0190f2a0-0000-7000-8000-000000000001';
const OTHER = '0190f2a0-0000-7000-8000-000000000002';
const SECRET = 'feed-cursor-test-secret-0123456789abcdef';
const INVALID = 'page[after] is not a valid cursor; use the links.next of a previous page of this feed';

describe('store feed cursors', () => {
  const cursors = new FeedCursors(SECRET);
  const position = { at: '2026-11-01T00:00:00.000001Z', key: 'a/b 😀 %' };

  it('round-trips a position, also through another instance with the same secret (a restart)', () => {
    const token = cursors.encode('rows', STORE, position);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(new FeedCursors(SECRET).decode(token, 'rows', STORE, 'page[after]')).toEqual(position);
  });

  it('refuses a cursor of another store or of the other feed', () => {
    expectInvalidParameter(
      () => cursors.decode(cursors.encode('rows', OTHER, position), 'rows', STORE, 'page[after]'),
      'page[after]',
      "page[after] is a cursor of another store's feed",
    );
    expectInvalidParameter(
      () => cursors.decode(cursors.encode('deletions', STORE, position), 'rows', STORE, 'page[after]'),
      'page[after]',
      "page[after] is a cursor of the store's deletions feed, not of its rows feed",
    );
  });

  it('refuses a cursor signed with another secret', () => {
    const foreign = new FeedCursors('another-secret-another-secret-0123456789').encode('rows', STORE, position);
    expectInvalidParameter(() => cursors.decode(foreign, 'rows', STORE, 'page[after]'), 'page[after]', INVALID);
  });

  it('refuses a forged payload, even one that names this store', () => {
    const token = cursors.encode('rows', STORE, position);
    const [, tag] = token.split('.');
    const forged = Buffer.from(JSON.stringify([1, 'rows', STORE, '2020-01-01T00:00:00.000000Z', ''])).toString('base64url');
    expectInvalidParameter(() => cursors.decode(`${forged}.${tag}`, 'rows', STORE, 'page[after]'), 'page[after]', INVALID);
  });

  it.each([
    ['empty', ''],
    ['no tag', 'abc'],
    ['three parts', 'a.b.c'],
    ['not base64url', 'a+b.c'],
    ['oversized', `${'a'.repeat(9000)}.b`],
    ['short tag', 'abc.AAAA'],
  ])('refuses a malformed cursor: %s', (_case, token) => {
    expectInvalidParameter(() => cursors.decode(token, 'rows', STORE, 'page[after]'), 'page[after]', INVALID);
  });
});
