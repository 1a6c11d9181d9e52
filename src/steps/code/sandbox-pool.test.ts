import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { serializeStepError, type SerializedStepError } from '../../engine/step-errors.js';
import { RunCancel } from '../../lib/cancellation.js';
import type { StepRunContext } from '../step-runtime.js';
import { runCode } from './run-code.js';
import { tuneInlineRuns } from './inline-runs.js';
import { closeSandboxPool, crashBusySandboxThreads, sandboxThreadsStarted, tuneSandboxPool } from './sandbox-pool.js';
import { PIPELINE_DEPTH } from './sandbox-thread.js';
import { stepContext } from '../../../test/support/step-context.js';

const run = (code: string, config: Record<string, unknown> = {}, cancel = new RunCancel()) =>
  runCode(stepContext({ config: { code, ...config }, input: { id: 42 }, cancel } satisfies Partial<StepRunContext>));

async function failure(code: string, config: Record<string, unknown> = {}, cancel?: RunCancel): Promise<SerializedStepError> {
  try {
    await run(code, config, cancel);
  } catch (error) {
    return serializeStepError(error);
  }
  throw new Error(`expected the code to fail: ${code}`);
}

/** Busy for `ms` of wall time inside the sandbox, then returns when it started and ended. */
const busyFor = (ms: number) => `const start = Date.now(); while (Date.now() - start < ${ms}) {} return [start, Date.now()];`;

const defaults = tuneSandboxPool({});
const inlineDefaults = tuneInlineRuns({});

/** Settled with 'late' after `ms`, unless `promise` settles first. */
async function before<T>(promise: Promise<T>, ms: number): Promise<T | 'late'> {
  const timer = new AbortController();
  try {
    return await Promise.race([promise, sleep(ms, 'late' as const, { signal: timer.signal })]);
  } finally {
    timer.abort();
  }
}

// One worker unless a test asks for more: a worker's first start under tsx takes ~0.5 s, so the tests share it.
// Every run goes to the pool: these tests are of the pool (inline-runs.test.ts has the calling thread's share).
beforeAll(async () => {
  tuneInlineRuns({ sliceMs: 0 });
  tuneSandboxPool({ size: 1 });
  await run('return 1;');
});

afterEach(() => {
  tuneSandboxPool({ ...defaults, size: 1 });
});

afterAll(async () => {
  tuneInlineRuns(inlineDefaults);
  tuneSandboxPool(defaults);
  await closeSandboxPool();
});

describe('sandbox pool: the event loop stays free', () => {
  it('keeps timers firing while a code step loops until its deadline', async () => {
    let ticks = 0;
    const interval = setInterval(() => ticks++, 10);
    const order: string[] = [];
    const step = failure('while (true) {}', { timeout_ms: 300 }).then((error) => {
      order.push('step');
      return error;
    });
    await sleep(10);
    order.push('timer');
    const error = await step;
    clearInterval(interval);
    expect(error).toMatchObject({ name: 'StepTimeoutError', code: 'timeout', message: 'the code ran past its 300 ms time limit' });
    expect(order).toEqual(['timer', 'step']);
    // On the main thread this loop let no tick through at all.
    expect(ticks).toBeGreaterThan(5);
  });

  it('stops a busy `while (true) {}` when the execution is cancelled, through the shared flag, keeping the worker', async () => {
    const started = sandboxThreadsStarted();
    const cancel = new RunCancel();
    setTimeout(() => cancel.abort(), 50);
    // The watchdog would answer for a silent worker only after its grace; the flag answers well before.
    expect(await before(failure('while (true) {}', { timeout_ms: 10_000 }, cancel), 50 + defaults.graceMs)).toEqual({
      name: 'StepError',
      code: 'cancelled',
      message: 'the code step was cancelled',
      retryable: false,
      retry_after_ms: null,
    });
    expect((await run('return input.id;')).output).toBe(42);
    expect(sandboxThreadsStarted()).toBe(started);
  });
});

describe('sandbox pool: workers', () => {
  it('queues runs beyond its size in order; a run cancelled while waiting never starts', async () => {
    const cancel = new RunCancel();
    const done: string[] = [];
    const first = run(busyFor(100)).then(() => done.push('first'));
    const cancelled = failure('return 1;', {}, cancel).then((error) => done.push(`cancelled: ${error.code}`));
    const third = run('return input.id;').then((result) => done.push(`third: ${String(result.output)}`));
    cancel.abort();
    await Promise.all([first, cancelled, third]);
    expect(done).toEqual(['cancelled: cancelled', 'first', 'third: 42']);
  });

  it('hands a worker its next runs before the current one ends, so it goes on while the main thread is busy', async () => {
    const first = run(busyFor(20));
    const next = Array.from({ length: PIPELINE_DEPTH - 1 }, () => run('return Date.now();'));
    // Block the main thread well past the first run: the others run in the worker meanwhile.
    const blockedUntil = Date.now() + 400;
    while (Date.now() < blockedUntil) {
      // busy
    }
    const unblockedAt = Date.now();
    await first;
    for (const result of await Promise.all(next)) expect(result.output as number).toBeLessThan(unblockedAt);
  });

  it('fails only the run of a crashed worker, and starts another for the run waiting behind it', async () => {
    const started = sandboxThreadsStarted();
    const doomed = failure('while (true) {}', { timeout_ms: 10_000 });
    const waiting = run('return input.id;');
    await sleep(50);
    await crashBusySandboxThreads();
    expect(await doomed).toEqual({
      name: 'StepError',
      code: 'sandbox_failed',
      message: 'the code sandbox failed: its worker thread exited with code 1',
      retryable: true,
      retry_after_ms: null,
    });
    expect((await waiting).output).toBe(42);
    expect(sandboxThreadsStarted()).toBe(started + 1);
  });

  it('terminates a worker that stays silent past its deadline and grace, failing the step with the timeout error', async () => {
    tuneSandboxPool({ graceMs: -4_900 });
    const started = sandboxThreadsStarted();
    expect(await failure('while (true) {}', { timeout_ms: 5_000 })).toEqual({
      name: 'StepTimeoutError',
      code: 'timeout',
      message: 'the code ran past its 5000 ms time limit',
      retryable: true,
      retry_after_ms: null,
    });
    tuneSandboxPool({ graceMs: defaults.graceMs });
    expect((await run('return input.id;')).output).toBe(42);
    expect(sandboxThreadsStarted()).toBe(started + 1);
  });

  it('runs two steps at the same time on two workers', async () => {
    tuneSandboxPool({ size: 2 });
    // Both workers warm first, so neither run waits for a worker to start.
    await Promise.all([run('return 1;'), run('return 2;')]);
    const [a, b] = (await Promise.all([run(busyFor(200)), run(busyFor(200))])).map((result) => result.output as [number, number]);
    expect(a![0]).toBeLessThan(b![1]);
    expect(b![0]).toBeLessThan(a![1]);
  });

  it('takes the runs queued behind a slow run back and gives them to another worker', async () => {
    tuneSandboxPool({ size: 2 });
    await Promise.all([run('return 1;'), run('return 2;')]);
    const slow = run(busyFor(400));
    // Handed in turn to the less loaded worker: every other one queues behind the slow run.
    const quick = Array.from({ length: 6 }, () => run('return Date.now();'));
    const ends = (await Promise.all(quick)).map((result) => result.output as number);
    const [, slowEnd] = (await slow).output as [number, number];
    expect(ends.length).toBe(6);
    for (const end of ends) expect(end).toBeLessThan(slowEnd - 300);
  });
});

describe('sandbox pool: process lifetime', () => {
  it('holds the process only while a run is in flight: a script that used it exits by itself', async () => {
    const script = `
      const { runCode } = await import(${JSON.stringify(new URL('./run-code.ts', import.meta.url).href)});
      const { RunCancel } = await import(${JSON.stringify(new URL('../../lib/cancellation.ts', import.meta.url).href)});
      const context = { nodeId: 'n', config: { code: ${JSON.stringify(busyFor(50))} }, input: null, nodes: {}, trigger: null,
        cancel: new RunCancel(), attempt: 1, execution: { id: 'e', workflowId: 'w', workspaceId: 's' }, settings: { httpAllow: [] } };
      const result = await runCode(context);
      console.log(result.output.length);`;
    const args = ['--import', import.meta.resolve('tsx'), '--input-type=module', '--eval', script];
    const exit = await new Promise<{ code: number | null; killed: boolean; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, args, { timeout: 15_000 }, (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, killed: error?.killed ?? false, stdout, stderr });
      });
    });
    // The output proves the in-flight run held the process; the exit proves the idle worker did not.
    expect(exit).toEqual({ code: 0, killed: false, stdout: '2\n', stderr: '' });
  });
});
