import { describe, expect, it } from 'vitest';
import { RunRecovery, type Recovered } from './run-recovery.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('RunRecovery', () => {
  it('takes a failed execution up again after the first pause', async () => {
    const resumed: string[] = [];
    const recovery = new RunRecovery(
      async (id) => (resumed.push(id), 'resumed'),
      () => {},
      [10, 10],
    );
    recovery.failed('e1');
    expect(recovery.pending('e1')).toBe(true);
    expect(resumed).toEqual([]);
    await pause(40);
    expect(resumed).toEqual(['e1']);
    expect(recovery.pending('e1')).toBe(false);
  });

  it('gives up after its last pause, saying how many runs failed', async () => {
    const gaveUp: [string, number][] = [];
    let resumes = 0;
    const recovery = new RunRecovery(
      async () => ((resumes += 1), 'resumed' as Recovered),
      (id, attempts) => gaveUp.push([id, attempts]),
      [5, 5],
    );
    // Each resumed run fails again.
    recovery.failed('e1');
    await pause(25);
    recovery.failed('e1');
    await pause(25);
    recovery.failed('e1');
    expect(resumes).toBe(2);
    expect(gaveUp).toEqual([['e1', 2]]);
    expect(recovery.pending('e1')).toBe(false);
  });

  it('counts a resume that throws (the database still failing) as a failed attempt', async () => {
    const gaveUp: string[] = [];
    let resumes = 0;
    const recovery = new RunRecovery(
      async () => {
        resumes += 1;
        throw new Error('database is locked');
      },
      (id) => gaveUp.push(id),
      [5, 5, 5],
    );
    recovery.failed('e1');
    await pause(80);
    expect(resumes).toBe(3);
    expect(gaveUp).toEqual(['e1']);
  });

  it('starts the count over once a run ends without failing, or when there was nothing to resume', async () => {
    let resumes = 0;
    const gaveUp: string[] = [];
    const recovery = new RunRecovery(
      async () => ((resumes += 1), 'resumed' as Recovered),
      (id) => gaveUp.push(id),
      [5],
    );
    recovery.failed('e1');
    await pause(20);
    recovery.succeeded('e1');
    recovery.failed('e1');
    await pause(20);
    expect(resumes).toBe(2);
    expect(gaveUp).toEqual([]);

    const settled = new RunRecovery(
      async () => 'settled',
      (id) => gaveUp.push(id),
      [5],
    );
    settled.failed('e2');
    await pause(20);
    settled.failed('e2');
    expect(settled.pending('e2')).toBe(true);
    expect(gaveUp).toEqual([]);
    settled.stop();
  });

  it('resumes nothing once stopped', async () => {
    let resumes = 0;
    const recovery = new RunRecovery(
      async () => ((resumes += 1), 'resumed' as Recovered),
      () => {},
      [5],
    );
    recovery.failed('e1');
    recovery.stop();
    await pause(20);
    expect(resumes).toBe(0);
  });
});
