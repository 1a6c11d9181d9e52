import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RunCancel } from '../../lib/cancellation.js';
import { inlineRunCounts, loadInlineModule, runSandboxed, tuneInlineRuns } from './inline-runs.js';
import type { SandboxOutcome } from './sandbox.js';
import { closeSandboxPool, sandboxThreadsStarted, tuneSandboxPool } from './sandbox-pool.js';

const MIB = 1024 * 1024;
const defaults = tuneInlineRuns({});
const poolDefaults = tuneSandboxPool({});
let keys = 0;

/** A run of its own step (a new reuse key each call unless given), with its console lines. */
async function run(
  code: string,
  { timeoutMs = 5_000, memoryBytes = 64 * MIB, reuseKey = `step-${++keys}`, input = { id: 42 } as unknown } = {},
): Promise<{ outcome: SandboxOutcome; logs: string[] }> {
  const logs: string[] = [];
  const outcome = await runSandboxed({
    code,
    argumentsJson: JSON.stringify({ input, nodes: {}, trigger: {} }),
    reuseKey,
    timeoutMs,
    memoryBytes,
    cancel: new RunCancel(),
    maxLogLines: 1_000,
    maxLogBytes: 64 * 1024,
    onLog: (line) => {
      logs.push(line);
      return false;
    },
  });
  return { outcome, logs };
}

const json = ({ outcome }: { outcome: SandboxOutcome }) => (outcome.ok ? JSON.parse(outcome.json) : outcome.failure);
/** The change in the counts while `body` runs. */
async function counted(body: () => Promise<unknown>): Promise<{ inline: number; handedOver: number }> {
  const before = inlineRunCounts();
  await body();
  const after = inlineRunCounts();
  return { inline: after.inline - before.inline, handedOver: after.handedOver - before.handedOver };
}

beforeAll(async () => {
  tuneSandboxPool({ size: 1 });
  await loadInlineModule();
});

// A slice far above a small run's time, so that no run meant to finish here is stopped by a slow
// machine (a cold first run, a preempted thread); the runs meant to overrun it loop longer. The
// whole second is theirs, so the slices the tests use up never send a run to the pool by share.
// Every stop counts as a busy run's (interruptsPerMs 0): the loops here call Date.now, which
// does less work a ms than the calibration counts on, however long they hold the thread.
const SLICE_MS = 100;
beforeEach(() => {
  tuneInlineRuns({ sliceMs: SLICE_MS, share: 1, interruptsPerMs: 0 });
});

afterEach(() => {
  tuneInlineRuns(defaults);
});

afterAll(async () => {
  tuneSandboxPool(poolDefaults);
  await closeSandboxPool();
});

describe('code runs on the calling thread first', () => {
  it('runs a small run here, with its console lines, starting no worker thread', async () => {
    const threads = sandboxThreadsStarted();
    let result: Awaited<ReturnType<typeof run>> | undefined;
    expect(await counted(async () => (result = await run("console.log('here'); return { id: 42, ok: true };")))).toEqual({
      inline: 1,
      handedOver: 0,
    });
    expect(json(result!)).toEqual({ id: 42, ok: true });
    expect(result!.logs).toEqual(['here']);
    expect(sandboxThreadsStarted()).toBe(threads);
  });

  it('runs a run that outlasts the slice again on the pool, under the step limit, keeping only the lines of the run that counted', async () => {
    let result: Awaited<ReturnType<typeof run>> | undefined;
    // Slow for some input only, as real steps are.
    const code = `console.log('start'); const t = Date.now(); while (input.slow && Date.now() - t < ${SLICE_MS * 2}) {} console.log('end'); return input.slow ? 'slow' : 'quick';`;
    expect(await counted(async () => (result = await run(code, { reuseKey: 'slow-step', input: { slow: true } })))).toEqual({
      inline: 0,
      handedOver: 1,
    });
    expect(json(result!)).toBe('slow');
    expect(result!.logs).toEqual(['start', 'end']);
    // Once may be the machine's doing: the step's next run is tried here again.
    expect(await counted(async () => (result = await run(code, { reuseKey: 'slow-step', input: { slow: false } })))).toEqual({
      inline: 1,
      handedOver: 0,
    });
    expect(json(result!)).toBe('quick');
    // And the success cleared the stop: one more slow run is tried here first as well.
    expect(await counted(() => run(code, { reuseKey: 'slow-step', input: { slow: true } }))).toEqual({ inline: 0, handedOver: 1 });
  });

  it('sends a step stopped by the slice twice in a row to the pool at once', async () => {
    const code = `const t = Date.now(); while (Date.now() - t < ${SLICE_MS * 2}) {} return 'done';`;
    expect(await counted(() => run(code, { reuseKey: 'slower-step' }))).toEqual({ inline: 0, handedOver: 1 });
    expect(await counted(() => run(code, { reuseKey: 'slower-step' }))).toEqual({ inline: 0, handedOver: 1 });
    let result: Awaited<ReturnType<typeof run>> | undefined;
    expect(await counted(async () => (result = await run(code, { reuseKey: 'slower-step' })))).toEqual({ inline: 0, handedOver: 0 });
    expect(json(result!)).toBe('done');
    // The step with other code (a new version of the workflow) is tried here again.
    expect(await counted(() => run('return 2;', { reuseKey: 'slower-step' }))).toEqual({ inline: 1, handedOver: 0 });
    // Other steps still run here.
    expect(await counted(() => run('return 3;'))).toEqual({ inline: 1, handedOver: 0 });
  });

  it('does not send a step to the pool for stops of runs that had not done the slice’s work (a held-up thread), unless five come in a row', async () => {
    // Counted as held up: whatever these loops do, it is less than half the slice's worth.
    tuneInlineRuns({ sliceMs: SLICE_MS, share: 1, interruptsPerMs: 1e9 });
    const code = `const t = Date.now(); while (input.slow && Date.now() - t < ${SLICE_MS * 2}) {} return input.slow ? 'slow' : 'quick';`;
    for (let stop = 1; stop <= 4; stop += 1) {
      expect(await counted(() => run(code, { reuseKey: 'held-up-step', input: { slow: true } }))).toEqual({ inline: 0, handedOver: 1 });
    }
    // A success clears the count: four more are still tried here.
    expect(await counted(() => run(code, { reuseKey: 'held-up-step', input: { slow: false } }))).toEqual({ inline: 1, handedOver: 0 });
    for (let stop = 1; stop <= 4; stop += 1) {
      expect(await counted(() => run(code, { reuseKey: 'held-up-step', input: { slow: true } }))).toEqual({ inline: 0, handedOver: 1 });
    }
    // The fifth in a row sends the step to the pool.
    expect(await counted(() => run(code, { reuseKey: 'held-up-step', input: { slow: true } }))).toEqual({ inline: 0, handedOver: 1 });
    expect(await counted(() => run(code, { reuseKey: 'held-up-step', input: { slow: false } }))).toEqual({ inline: 0, handedOver: 0 });
  });

  it('gives a run that needs more memory than the slice allows the step own limit on the pool; the step own limit is final here', async () => {
    let result: Awaited<ReturnType<typeof run>> | undefined;
    const code = "return 'x'.repeat(12 * 1024 * 1024).length;";
    expect(await counted(async () => (result = await run(code, { memoryBytes: 64 * MIB, reuseKey: 'big-step' })))).toEqual({
      inline: 0,
      handedOver: 1,
    });
    expect(json(result!)).toBe(12 * MIB);
    // One stop by memory is enough: the step's next run goes to the pool at once.
    expect(await counted(async () => (result = await run(code, { memoryBytes: 64 * MIB, reuseKey: 'big-step' })))).toEqual({
      inline: 0,
      handedOver: 0,
    });
    expect(json(result!)).toBe(12 * MIB);
    expect(await counted(async () => (result = await run(code, { memoryBytes: 1 * MIB })))).toEqual({ inline: 1, handedOver: 0 });
    expect(json(result!)).toEqual({ kind: 'memory' });
  });

  it('ends a run whose own time limit is within the slice here, as a timeout', async () => {
    let result: Awaited<ReturnType<typeof run>> | undefined;
    expect(await counted(async () => (result = await run('while (true) {}', { timeoutMs: 20 })))).toEqual({ inline: 1, handedOver: 0 });
    expect(json(result!)).toEqual({ kind: 'timeout' });
  });

  it('keeps timers firing while a run loops until its deadline', async () => {
    let ticks = 0;
    let longestGap = 0;
    let last = performance.now();
    const interval = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
      ticks++;
    }, 5);
    const result = await run('while (true) {}', { timeoutMs: 1_000 });
    clearInterval(interval);
    expect(json(result)).toEqual({ kind: 'timeout' });
    expect(ticks).toBeGreaterThan(10);
    // Held here, the loop would have held the timers for the whole second.
    expect(longestGap).toBeLessThan(500);
  });

  it('lets runs started in one tick take turns here, up to the queue, and gives the rest to the pool', async () => {
    let results: Awaited<ReturnType<typeof run>>[] = [];
    const counts = await counted(async () => (results = await Promise.all(Array.from({ length: 40 }, (_, i) => run(`return ${i} * 2;`)))));
    expect(results.map(json)).toEqual(Array.from({ length: 40 }, (_, i) => i * 2));
    // Thirty-two took their turn here; the other eight went to the pool at once.
    expect(counts).toEqual({ inline: 32, handedOver: 0 });
  });

  it('sends every run to the pool once inline runs have used their share of the last second, and every run when the slice is 0', async () => {
    // 50 ms a second: one run of 60 ms uses it up.
    tuneInlineRuns({ sliceMs: SLICE_MS, share: 0.05 });
    const busy = `const t = Date.now(); while (Date.now() - t < 60) {} return 'busy';`;
    expect(await counted(() => run(busy))).toEqual({ inline: 1, handedOver: 0 });
    let result: Awaited<ReturnType<typeof run>> | undefined;
    expect(await counted(async () => (result = await run('return 1;')))).toEqual({ inline: 0, handedOver: 0 });
    expect(json(result!)).toBe(1);
    tuneInlineRuns({ ...defaults, sliceMs: 0 });
    expect(await counted(() => run('return 1;'))).toEqual({ inline: 0, handedOver: 0 });
    tuneInlineRuns({ ...defaults, sliceMs: SLICE_MS });
    expect(await counted(() => run('return 1;'))).toEqual({ inline: 1, handedOver: 0 });
  });

  it('sends large code and large input to the pool without trying them here', async () => {
    const big = `return ${JSON.stringify('y'.repeat(20_000))}.length;`;
    let result: Awaited<ReturnType<typeof run>> | undefined;
    expect(await counted(async () => (result = await run(big)))).toEqual({ inline: 0, handedOver: 0 });
    expect(json(result!)).toBe(20_000);
  });
});
