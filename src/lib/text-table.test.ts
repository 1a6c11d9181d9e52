import { describe, expect, it } from 'vitest';
import { TextTable } from './text-table.js';

const fnv = (text: string) => {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
  return hash;
};

/** A look-up as the scanners do it: probe from the hash, check the key; insert where the probe ended. */
function lookUp(table: TextTable<number>, key: string, value: number): number {
  const hash = fnv(key);
  const { keys, hashes, mask } = table;
  let slot = hash & mask;
  for (;;) {
    const held = keys[slot];
    if (held === undefined) break;
    if (hashes[slot] === hash && held === key) return table.values[slot]!;
    slot = (slot + 1) & mask;
  }
  table.insert(slot, key, hash, value);
  return value;
}

describe('text table', () => {
  it('grows as it fills and still finds every key it held', () => {
    const table = new TextTable<number>(2, 12);
    const keys = Array.from({ length: 1500 }, (_, i) => `piece-${i}`);
    for (const [i, key] of keys.entries()) expect(lookUp(table, key, i)).toBe(i);
    expect(table.size).toBe(1500);
    expect(table.mask + 1).toBe(4096);
    // Known keys answer their first value, not the one offered now.
    for (const [i, key] of keys.entries()) expect(lookUp(table, key, -1)).toBe(i);
    expect(table.size).toBe(1500);
  });

  it('is emptied when full at its largest, and goes on answering', () => {
    const table = new TextTable<number>(2, 4);
    for (let i = 0; i < 8; i++) lookUp(table, `k${i}`, i);
    expect(table.size).toBe(8);
    expect(table.mask + 1).toBe(16);
    // The ninth key would make it more than half full: emptied, then the key goes in.
    expect(lookUp(table, 'k8', 8)).toBe(8);
    expect(table.size).toBe(1);
    expect(lookUp(table, 'k0', 100)).toBe(100);
    expect(lookUp(table, 'k8', -1)).toBe(8);
  });

  it('tells apart keys of the same hash', () => {
    // "yaczfa" and "glbppa" have the same FNV-1a hash.
    expect(fnv('yaczfa')).toBe(fnv('glbppa'));
    const table = new TextTable<number>(3, 8);
    expect(lookUp(table, 'yaczfa', 1)).toBe(1);
    expect(lookUp(table, 'glbppa', 2)).toBe(2);
    expect(lookUp(table, 'yaczfa', -1)).toBe(1);
    expect(lookUp(table, 'glbppa', -1)).toBe(2);
  });
});
