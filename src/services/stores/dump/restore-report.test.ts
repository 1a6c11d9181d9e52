import { describe, expect, it } from 'vitest';
import { hash53, KeyLines, MAX_REPORTED, RestoreReport } from './restore-report.js';

describe('RestoreReport', () => {
  it('lists the first 1,000 failures and counts them all', () => {
    const report = new RestoreReport();
    for (let line = 2; line < 2 + MAX_REPORTED + 5; line++)
      report.fail({ line, key: `k${line}`, errors: [{ pointer: '/row/a', detail: 'row.a must be integer' }] });
    const meta = report.meta();
    expect(meta.rows_failed).toBe(MAX_REPORTED + 5);
    expect(meta.failures).toHaveLength(MAX_REPORTED);
    expect(meta.failures.at(-1)!.line).toBe(MAX_REPORTED + 1);
  });

  it("names every line of a repeated key, the earlier batches' line included", () => {
    const report = new RestoreReport();
    // Batch one: a (line 2) and b (line 3) imported; a again in the same batch (line 4).
    report.read('a', 2, undefined);
    report.read('b', 3, undefined);
    report.read('a', 4, 2);
    report.imported('a', 4);
    report.imported('b', 3);
    // Batch two: b once (line 9), replacing batch one's row; a once more (line 10).
    report.read('b', 9, undefined);
    report.read('a', 10, undefined);
    report.replaced('b', 9);
    report.replaced('a', 10);
    expect(report.meta()).toEqual({
      rows_imported: 2,
      rows_failed: 0,
      failures: [],
      duplicates: [
        { key: 'a', lines: [2, 4, 10] },
        { key: 'b', lines: [3, 9] },
      ],
    });
  });

  it('lists the first 1,000 repeated keys', () => {
    const report = new RestoreReport();
    for (let i = 0; i < MAX_REPORTED + 3; i++) {
      report.read(`k${i}`, 2 * i + 2, undefined);
      report.read(`k${i}`, 2 * i + 3, 2 * i + 2);
    }
    const { duplicates } = report.meta();
    expect(duplicates).toHaveLength(MAX_REPORTED);
    expect(duplicates[0]).toEqual({ key: 'k0', lines: [2, 3] });
  });
});

describe('KeyLines', () => {
  it('finds the line added last for a key, past its growth', () => {
    const lines = new KeyLines();
    for (let i = 0; i < 5000; i++) lines.add(`key-${i}`, i + 2);
    expect(lines.find('key-0')).toBe(2);
    expect(lines.find('key-4999')).toBe(5001);
    expect(lines.find('key-5000')).toBeUndefined();
    expect(lines.find('😀')).toBeUndefined();
  });

  it('hashes into 53 bits, differently for keys that differ anywhere', () => {
    const hashes = Array.from({ length: 100_000 }, (_, i) => hash53(`order-${i}`));
    expect(hashes.every((hash) => Number.isSafeInteger(hash) && hash >= 0)).toBe(true);
    expect(new Set(hashes).size).toBe(100_000);
  });
});
