import { describe, expect, it } from 'vitest';
import { turnToken, WorkerTurns } from './worker-turns.js';

const STALE_MS = 25_000;

/** Workers that have all heard each other's `+id`, on one clock. */
function cluster(ids: string[], clock = { ms: 0 }) {
  const turns = new Map(ids.map((id) => [id, new WorkerTurns(id, STALE_MS, () => clock.ms)]));
  const hearAll = (message: string) => {
    for (const worker of turns.values()) worker.heard(message);
  };
  for (const id of ids) hearAll(`+${id}`);
  const owners = (token: string) => ids.filter((id) => turns.get(id)!.mine(token));
  return { turns, hearAll, owners, clock };
}

const tokens = Array.from({ length: 2_000 }, () => turnToken());

describe('worker turns', () => {
  it('gives each turn to exactly one of the workers that know each other, and spreads the turns over them', () => {
    const { owners } = cluster(['w-b', 'w-a', 'w-c']);
    const counts = new Map<string, number>();
    for (const token of tokens) {
      const [owner, ...others] = owners(token);
      expect(others).toEqual([]);
      counts.set(owner!, (counts.get(owner!) ?? 0) + 1);
    }
    // 2,000 turns over 3 workers: each gets a share near a third (far from 0 or all).
    for (const id of ['w-a', 'w-b', 'w-c']) expect(counts.get(id)).toBeGreaterThan(500);
  });

  it('a worker alone, or one that has heard of nobody yet, takes every turn', () => {
    const alone = new WorkerTurns('w-a', STALE_MS, () => 0);
    expect(tokens.every((token) => alone.mine(token))).toBe(true);
    expect(alone.mine('~not-a-number!')).toBe(true);
  });

  it('a worker that leaves (`-id`) gets no more turns; the others share them all', () => {
    const { turns, hearAll, owners } = cluster(['w-a', 'w-b', 'w-c']);
    hearAll('-w-b');
    expect(turns.get('w-a')!.live()).toEqual(['w-a', 'w-c']);
    for (const token of tokens) expect(owners(token).filter((id) => id !== 'w-b')).toHaveLength(1);
  });

  it('a worker not heard from within the stale time (killed unannounced) drops out of the others’ turns', () => {
    const clock = { ms: 0 };
    const { turns, owners } = cluster(['w-a', 'w-b'], clock);
    clock.ms = STALE_MS + 1;
    // Only w-a speaks again (its heartbeat): w-b is stale to w-a, which takes every turn.
    turns.get('w-a')!.heard('+w-a');
    turns.get('w-b')!.heard('+w-a');
    expect(turns.get('w-a')!.live()).toEqual(['w-a']);
    expect(tokens.every((token) => turns.get('w-a')!.mine(token))).toBe(true);
    expect(owners(tokens[0]!)).toContain('w-a');
  });

  it('answers whether an announcement names a worker it did not know (so it answers with its own)', () => {
    const clock = { ms: 0 };
    const turns = new WorkerTurns('w-a', STALE_MS, () => clock.ms);
    expect(turns.heard('+w-a')).toBe(false);
    expect(turns.heard('+w-b')).toBe(true);
    expect(turns.heard('+w-b')).toBe(false);
    clock.ms = STALE_MS + 1;
    expect(turns.heard('+w-b')).toBe(true);
    expect(turns.heard('-w-b')).toBe(false);
    expect(turns.heard('+w-b')).toBe(true);
    expect(turns.heard('junk')).toBe(false);
    expect(turns.heard('+')).toBe(false);
  });

  it('keeps the capacity each worker announced (`+id;capacity`) and lists the others, itself left out', () => {
    const clock = { ms: 0 };
    const turns = new WorkerTurns('api', STALE_MS, () => clock.ms);
    expect(turns.heard('+w-a;64')).toBe(true);
    expect(turns.heard('+w-b;8')).toBe(true);
    turns.heard('+w-c');
    turns.heard('+w-d;-3');
    turns.heard('+api;64');
    expect(turns.others().sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: 'w-a', capacity: 64 },
      { id: 'w-b', capacity: 8 },
      { id: 'w-c', capacity: 0 },
      { id: 'w-d', capacity: 0 },
    ]);
    // A new announcement replaces the capacity; a stale worker is no longer listed.
    turns.heard('+w-b;16');
    clock.ms = STALE_MS + 1;
    turns.heard('+w-b;16');
    expect(turns.others()).toEqual([{ id: 'w-b', capacity: 16 }]);
    expect(turns.live()).toEqual(['api', 'w-b']);
  });
});
