import { describe, expect, it } from 'vitest';
import { PendingRows } from './pending-rows.js';

const AT = '2026-01-01T00:00:00.000000Z';
const pending = (line: number, key: string, row: unknown, updatedAt = AT) => ({
  line,
  key,
  row: JSON.stringify(row),
  created_at: AT,
  updated_at: updatedAt,
});

/** The live entries, in order, read back as strings. */
function entries(rows: PendingRows) {
  const out = [];
  for (let i = 0; i < rows.count; i++) {
    if (rows.isLive(i))
      out.push({ line: rows.line(i), key: rows.key(i), row: rows.row(i), created_at: rows.createdAt(i), updated_at: rows.updatedAt(i) });
  }
  return out;
}

describe('PendingRows', () => {
  it('keeps the rows in the order of the lines that won, answering the line each repeated key replaced', () => {
    const rows = new PendingRows(10, 1024 * 1024);
    expect(rows.add(pending(2, 'a', { n: 1 }))).toBeUndefined();
    expect(rows.add(pending(3, 'b', { n: 2 }))).toBeUndefined();
    expect(rows.add(pending(4, 'a', { n: 3 }, '2026-01-02T00:00:00.000000Z'))).toBe(2);
    expect(rows.add(pending(5, 'c', { n: 4 }))).toBeUndefined();
    expect(rows.add(pending(6, 'a', { n: 5 }))).toBe(4);
    expect(rows.size).toBe(3);
    expect(entries(rows)).toEqual([pending(3, 'b', { n: 2 }), pending(5, 'c', { n: 4 }), pending(6, 'a', { n: 5 })]);
  });

  it('gives back keys and rows of any Unicode exactly, and tells keys apart by their characters', () => {
    const rows = new PendingRows(10, 1024 * 1024);
    const keys = ['é', 'e\u0301', '😀', 'ключ', 'a"b\\c', ' '];
    keys.forEach((key, i) => rows.add(pending(i + 2, key, { text: `${key} naïve € 😀 \n\t"` })));
    expect(rows.add(pending(20, '😀', { text: 'again' }))).toBe(4);
    expect(entries(rows).map((entry) => [entry.key, JSON.parse(entry.row).text])).toEqual([
      ['é', 'é naïve € 😀 \n\t"'],
      ['e\u0301', 'e\u0301 naïve € 😀 \n\t"'],
      ['ключ', 'ключ naïve € 😀 \n\t"'],
      ['a"b\\c', 'a"b\\c naïve € 😀 \n\t"'],
      [' ', '  naïve € 😀 \n\t"'],
      ['😀', 'again'],
    ]);
  });

  it('compacts replaced rows away, so a key repeated on every line holds one entry', () => {
    const rows = new PendingRows(4, 1024 * 1024);
    rows.add(pending(2, 'first', { n: 0 }));
    for (let line = 3; line < 1003; line++) expect(rows.add(pending(line, 'again', { n: line }))).toBe(line === 3 ? undefined : line - 1);
    rows.add(pending(1003, 'last', { n: 1 }));
    expect(rows.size).toBe(3);
    expect(rows.count).toBeLessThanOrEqual(8);
    expect(entries(rows).map((entry) => [entry.line, entry.key])).toEqual([
      [2, 'first'],
      [1002, 'again'],
      [1003, 'last'],
    ]);
    // The hash slots were rebuilt with the entries: a repeat still finds its key.
    expect(rows.add(pending(1004, 'first', { n: 2 }))).toBe(2);
  });

  it('is full at maxRows rows or at maxBytes of them, and grows its buffer for rows past it', () => {
    const byRows = new PendingRows(2, 1024 * 1024);
    byRows.add(pending(2, 'a', {}));
    expect(byRows.full).toBe(false);
    byRows.add(pending(3, 'b', {}));
    expect(byRows.full).toBe(true);

    const byBytes = new PendingRows(100, 1000);
    const big = { text: 'é'.repeat(300) };
    byBytes.add(pending(2, 'a', big));
    expect(byBytes.full).toBe(false);
    byBytes.add(pending(3, 'b', big));
    expect(byBytes.full).toBe(true);
    expect(byBytes.liveBytes).toBe(2 * (1 + Buffer.byteLength(JSON.stringify(big)) + 2 * AT.length));
    expect(entries(byBytes)).toEqual([pending(2, 'a', big), pending(3, 'b', big)]);
  });

  it('starts afresh after clear, and refuses rows past maxRows that nobody imported', () => {
    const rows = new PendingRows(2, 1024 * 1024);
    rows.add(pending(2, 'a', { n: 1 }));
    rows.add(pending(3, 'b', { n: 2 }));
    rows.clear();
    expect([rows.size, rows.count, rows.liveBytes, rows.full]).toEqual([0, 0, 0, false]);
    expect(rows.add(pending(4, 'a', { n: 3 }))).toBeUndefined();
    expect(entries(rows)).toEqual([pending(4, 'a', { n: 3 })]);
    rows.add(pending(5, 'b', {}));
    rows.add(pending(6, 'c', {}));
    rows.add(pending(7, 'd', {}));
    expect(() => rows.add(pending(8, 'e', {}))).toThrow('the batch holds 4 rows, over its 2: import it when it is full');
  });
});
