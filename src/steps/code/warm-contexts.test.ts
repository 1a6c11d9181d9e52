import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunCancel } from '../../lib/cancellation.js';
import { closeSandboxPool, runInSandboxPool, sandboxModulesLoaded, tuneSandboxPool } from './sandbox-pool.js';
import { MAX_RUNS_PER_CONTEXT } from './warm-contexts.js';

const MIB = 1024 * 1024;

interface Options {
  input?: unknown;
  timeoutMs?: number;
  memoryMb?: number;
  cancel?: RunCancel;
}

/** One run through the pool (one worker, so every run of a key meets the same warm cache). */
async function sandboxRun(
  key: string | null,
  code: string,
  { input = {}, timeoutMs = 1_000, memoryMb = 64, cancel = new RunCancel() }: Options = {},
) {
  const logs: string[] = [];
  const outcome = await runInSandboxPool({
    code,
    argumentsJson: JSON.stringify({ input, nodes: {}, trigger: null }),
    reuseKey: key,
    timeoutMs,
    memoryBytes: memoryMb * MIB,
    cancel,
    maxLogLines: 100,
    maxLogBytes: 64 * 1024,
    onLog: (line) => {
      logs.push(line);
      return false;
    },
  });
  return {
    reused: outcome.reused,
    value: outcome.ok ? (JSON.parse(outcome.json) as unknown) : undefined,
    failure: outcome.ok ? undefined : outcome.failure.kind,
    logs,
  };
}

const defaults = tuneSandboxPool({});
let keys = 0;
/** A key no other test uses, so the tests share no warm context. */
const freshKey = () => `test-workspace\ntest-workflow\nnode-${++keys}`;

beforeAll(async () => {
  tuneSandboxPool({ size: 1 });
  await sandboxRun(null, 'return 1;');
});

afterAll(async () => {
  tuneSandboxPool(defaults);
  await closeSandboxPool();
});

describe('warm sandbox contexts', () => {
  it('serves the next run of the same key and code, with that run’s own input, answer and console lines', async () => {
    const key = freshKey();
    const code = "console.log('run', input.n); return { n: input.n };";
    expect(await sandboxRun(key, code, { input: { n: 1 } })).toEqual({
      reused: false,
      value: { n: 1 },
      failure: undefined,
      logs: ['run 1'],
    });
    expect(await sandboxRun(key, code, { input: { n: 2 } })).toEqual({
      reused: true,
      value: { n: 2 },
      failure: undefined,
      logs: ['run 2'],
    });
    expect(await sandboxRun(key, code, { input: { n: 3 } })).toEqual({
      reused: true,
      value: { n: 3 },
      failure: undefined,
      logs: ['run 3'],
    });
  });

  it('removes the globals a run added; changes to built-ins stay with the key', async () => {
    const key = freshKey();
    const code = `const seen = { implicit: typeof implicitGlobal, assigned: typeof globalThis.assigned, defined: typeof definedGlobal, mark: ({}).mark ?? null };
      implicitGlobal = input.n;
      globalThis.assigned = input.n;
      Object.defineProperty(globalThis, 'definedGlobal', { value: input.n, configurable: true });
      Object.prototype.mark = input.n;
      return seen;`;
    expect(await sandboxRun(key, code, { input: { n: 1 } })).toMatchObject({
      reused: false,
      value: { implicit: 'undefined', assigned: 'undefined', defined: 'undefined', mark: null },
    });
    expect(await sandboxRun(key, code, { input: { n: 2 } })).toMatchObject({
      reused: true,
      value: { implicit: 'undefined', assigned: 'undefined', defined: 'undefined', mark: 1 },
    });
    // Another key, or another code under the same key, never sees the change.
    expect(await sandboxRun(freshKey(), code, { input: { n: 3 } })).toMatchObject({ reused: false, value: { mark: null } });
    expect(await sandboxRun(key, `${code}\n// edited`, { input: { n: 4 } })).toMatchObject({ reused: false, value: { mark: null } });
  });

  // A sweep that looked only at how many globals there are would miss these: a run that deletes
  // built-ins and adds as many globals, of any kind of key (sandbox-context.ts GLOBALS_SWEEP).
  it.each([
    ['a string', 'delete globalThis.Math; globalThis.added = 1;'],
    ['an integer', 'delete globalThis.Math; globalThis[7] = 1;'],
    ['a symbol', "delete globalThis.Math; globalThis[Symbol.for('added')] = 1;"],
    ['a string in place of the symbol', 'delete globalThis[Symbol.toStringTag]; globalThis.added = 1;'],
    ['a string and a symbol', "delete globalThis.Math; delete globalThis.JSON; globalThis.added = 1; globalThis[Symbol.for('added')] = 1;"],
    ['an error class', 'delete globalThis.RetryAfterError; globalThis.added = 1;'],
  ])('removes %s added beside as many deleted globals', async (_, change) => {
    const key = freshKey();
    const code = `const seen = [typeof globalThis.added, typeof globalThis[7], typeof globalThis[Symbol.for('added')]];
      if (input.change) { ${change} }
      return seen;`;
    expect(await sandboxRun(key, code, { input: { change: true } })).toMatchObject({
      reused: false,
      value: ['undefined', 'undefined', 'undefined'],
    });
    expect(await sandboxRun(key, code)).toMatchObject({ reused: true, value: ['undefined', 'undefined', 'undefined'] });
  });

  it('never reuses a context for a run without a key', async () => {
    const code = 'const seen = ({}).keyless ?? null; Object.prototype.keyless = 1; return seen;';
    expect(await sandboxRun(null, code)).toMatchObject({ reused: false, value: null });
    expect(await sandboxRun(null, code)).toMatchObject({ reused: false, value: null });
  });

  // Only the time-out case has a short limit: on a loaded machine filling 8 MB can take longer
  // than 100 ms, and the memory case then failed as a time-out.
  it.each([
    ['throws', 'throw new Error("no");', 'thrown', 100],
    ['times out', 'for (;;) {}', 'timeout', 100],
    ['runs out of memory', 'const a = []; for (;;) a.push(new Array(100000).fill(input.n));', 'memory', 10_000],
    ['returns what is not JSON', 'return () => 1;', 'not_json', 100],
  ])('drops a context whose run %s, and the next run works on a fresh one', async (_, failing, kind, timeoutMs) => {
    const key = freshKey();
    const code = `if (input.fail) { ${failing} } const seen = ({}).mark ?? null; Object.prototype.mark = 1; return seen;`;
    expect(await sandboxRun(key, code)).toMatchObject({ reused: false, value: null });
    expect(await sandboxRun(key, code, { input: { fail: true }, timeoutMs, memoryMb: 8 })).toMatchObject({ reused: true, failure: kind });
    expect(await sandboxRun(key, code)).toMatchObject({ reused: false, value: null });
    expect(await sandboxRun(key, code)).toMatchObject({ reused: true, value: 1 });
  });

  it('drops a context whose run was cancelled', async () => {
    const key = freshKey();
    const code = 'if (input.loop) for (;;) {} return 1;';
    expect(await sandboxRun(key, code)).toMatchObject({ reused: false, value: 1 });
    const cancel = new RunCancel();
    setTimeout(() => cancel.abort(), 30);
    expect(await sandboxRun(key, code, { input: { loop: true }, timeoutMs: 10_000, cancel })).toMatchObject({
      reused: true,
      failure: 'cancelled',
    });
    expect(await sandboxRun(key, code)).toMatchObject({ reused: false, value: 1 });
  });

  it.each([
    ['leaves jobs queued', 'Promise.resolve().then(() => 0);'],
    ['adds a global that cannot be removed', "Object.defineProperty(globalThis, 'stuck', { value: 1, configurable: false });"],
    // QuickJS's heap walk counts objects, not string bytes: an array of a million numbers is ~8 MiB to it.
    ['ends with over 4 MiB of heap', 'globalThis.big = new Array(1e6).fill(1);'],
  ])('does not pass on the context of a successful run that %s', async (_, residue) => {
    const key = freshKey();
    const code = `if (input.dirty) { ${residue} } return 1;`;
    expect(await sandboxRun(key, code, { input: { dirty: true } })).toMatchObject({ reused: false, value: 1 });
    expect(await sandboxRun(key, code)).toMatchObject({ reused: false, value: 1 });
    expect(await sandboxRun(key, code)).toMatchObject({ reused: true, value: 1 });
  });

  it(`makes a fresh context after ${MAX_RUNS_PER_CONTEXT} runs of one`, async () => {
    const key = freshKey();
    const fresh: number[] = [];
    for (let i = 0; i < MAX_RUNS_PER_CONTEXT + 2; i++) if (!(await sandboxRun(key, 'return input;', { input: i })).reused) fresh.push(i);
    expect(fresh).toEqual([0, MAX_RUNS_PER_CONTEXT]);
  });

  it('keeps at most 32 idle contexts, dropping the least recently used', async () => {
    const code = 'return input;';
    const many = Array.from({ length: 33 }, () => freshKey());
    for (const key of many) await sandboxRun(key, code);
    expect((await sandboxRun(many[0]!, code)).reused).toBe(false);
    expect((await sandboxRun(many[32]!, code)).reused).toBe(true);
    expect((await sandboxRun(many[2]!, code)).reused).toBe(true);
  });

  it('drops the idle contexts of a WASM module that is replaced', async () => {
    const key = freshKey();
    await sandboxRun(key, 'return 1;');
    expect((await sandboxRun(key, 'return 1;')).reused).toBe(true);
    const loaded = sandboxModulesLoaded();
    // Growing the module's memory past 32 MiB retires it after the run.
    expect(await sandboxRun(freshKey(), "const big = 'x'.repeat(40 * 1024 * 1024); return big.length;")).toMatchObject({
      value: 40 * 1024 * 1024,
    });
    expect(await sandboxRun(key, 'return 1;')).toMatchObject({ reused: false, value: 1 });
    expect(sandboxModulesLoaded()).toBe(loaded + 1);
  });
});
