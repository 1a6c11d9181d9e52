import { describe, expect, it } from 'vitest';
import { serializeStepError, type SerializedStepError } from '../../engine/step-errors.js';
import { RunCancel } from '../../lib/cancellation.js';
import type { StepRunContext } from '../step-runtime.js';
import { tuneInlineRuns } from './inline-runs.js';
import { LOGS_TRUNCATED, runCode } from './run-code.js';
import { sandboxModulesLoaded } from './sandbox-pool.js';
import { stepContext } from '../../../test/support/step-context.js';

const order = {
  id: 42,
  items: [
    { sku: 'a-1', qty: 2 },
    { sku: 'b-2', qty: 1 },
  ],
  note: 'héllo ✓',
};

function contextFor(code: string, config: Record<string, unknown> = {}, overrides: Partial<StepRunContext> = {}): StepRunContext {
  return stepContext({
    nodeId: 'shape',
    config: { code, ...config },
    input: order,
    nodes: { hook: { body: order }, fetch: { status: 200 } },
    trigger: { method: 'POST', headers: {}, query: {}, body: order },
    execution: { id: 'exec-1', workflowId: 'wf-1', workspaceId: 'ws-1' },
    ...overrides,
  });
}

const run = (code: string, config: Record<string, unknown> = {}, overrides: Partial<StepRunContext> = {}) =>
  runCode(contextFor(code, config, overrides));

async function failure(
  code: string,
  config: Record<string, unknown> = {},
  overrides: Partial<StepRunContext> = {},
): Promise<SerializedStepError> {
  try {
    await run(code, config, overrides);
  } catch (error) {
    return serializeStepError(error);
  }
  throw new Error(`expected the code to fail: ${code}`);
}

const outputOf = async (code: string) => (await run(code)).output;

describe('runCode: values in and out', () => {
  it('returns the JSON of its input, with logs and metrics for the step record', async () => {
    const result = await run('return input;');
    expect(result.output).toEqual(order);
    expect(result.logs).toEqual([]);
    expect(result.ports).toBeUndefined();
    expect(result.metrics).toEqual({ kind: 'code', memory_bytes: expect.any(Number), reductions: expect.any(Number) });
    expect(result.metrics?.memory_bytes).toBeGreaterThan(10_000);
  });

  it('sees the outputs of earlier nodes and the trigger payload', async () => {
    expect(await outputOf('return { status: nodes.fetch.status, method: trigger.method, sku: trigger.body.items[1].sku };')).toEqual({
      status: 200,
      method: 'POST',
      sku: 'b-2',
    });
  });

  it('runs async code: await, Promise.all and async helpers work', async () => {
    const code = `
      const double = async (n) => n * 2;
      const totals = await Promise.all(input.items.map((item) => double(item.qty)));
      await null;
      return { totals, sum: totals.reduce((a, b) => a + b, 0) };`;
    expect(await outputOf(code)).toEqual({ totals: [4, 2], sum: 6 });
  });

  it('turns an undefined result into null and keeps JSON semantics inside values', async () => {
    expect(await outputOf('const x = 1;')).toBeNull();
    expect(await outputOf('return { a: () => 1, b: undefined, c: [() => 1], d: NaN, e: new Date(0) };')).toEqual({
      c: [null],
      d: null,
      e: '1970-01-01T00:00:00.000Z',
    });
  });

  it('captures console lines on the step record, not in the output', async () => {
    const code = `
      console.log('total', input.items.length, { id: input.id }, [1, 'two'], null, undefined, true);
      console.info('info'); console.warn('warn'); console.error(new TypeError('bad')); console.debug(10n, Symbol('s'), function named() {});
      const cycle = {}; cycle.self = cycle; console.log(cycle);
      return 'done';`;
    const result = await run(code);
    expect(result.output).toBe('done');
    expect(result.logs).toEqual([
      'total 2 {"id":42} [1,"two"] null undefined true',
      'info',
      'warn',
      expect.stringMatching(/^TypeError: bad\n {4}at <anonymous> \(code\.js:3:/),
      '10n Symbol(s) [Function: named]',
      '[not JSON: circular reference]',
    ]);
  });

  it('keeps at most 1000 console lines, then one truncation marker', async () => {
    const result = await run('for (let i = 0; i < 5000; i++) console.log(i); return 1;');
    expect(result.logs).toHaveLength(1001);
    expect(result.logs?.[999]).toBe('999');
    expect(result.logs?.[1000]).toBe(LOGS_TRUNCATED);
  });

  it('keeps at most 64 KiB of console output, cutting the line that overflows', async () => {
    const result = await run("console.log('a'.repeat(40000)); console.log('b'.repeat(40000)); console.log('c'); return 1;");
    expect(result.logs).toEqual(['a'.repeat(40000), 'b'.repeat(65536 - 40000), LOGS_TRUNCATED]);
  });
});

describe('runCode: failures in the vocabulary of the engine', () => {
  it('reports a syntax error with QuickJS message and the line in the code', async () => {
    expect(await failure('const a = 1;\nconst b = ;\nreturn a;')).toEqual({
      name: 'NonRetriableError',
      code: 'code_syntax_error',
      message: "unexpected token in expression: ';' (line 2)",
      retryable: false,
      retry_after_ms: null,
      details: { line: 2 },
    });
    // Unfinished code is reported on its last line, not on the wrapper's closing line.
    expect(await failure('return 1 +')).toMatchObject({
      code: 'code_syntax_error',
      message: "unexpected token in expression: '}' (line 1)",
    });
  });

  it('fails with a retryable code_error carrying the thrown message and the sandbox stack', async () => {
    const error = await failure("console.log('before');\nthrow new Error('no items');");
    expect(error).toEqual({
      name: 'StepError',
      code: 'code_error',
      message: 'no items',
      retryable: true,
      retry_after_ms: null,
      details: { name: 'Error', stack: expect.stringContaining('(code.js:2:'), logs: ['before'] },
    });
    expect(await failure('return input.missing.field;')).toMatchObject({
      code: 'code_error',
      message: "cannot read property 'field' of undefined",
    });
    expect(await failure("throw new Error('first line');")).toMatchObject({ details: { stack: '    at <anonymous> (code.js:1:16)' } });
    expect(await failure("throw 'plain string';")).toEqual({
      name: 'StepError',
      code: 'code_error',
      message: 'plain string',
      retryable: true,
      retry_after_ms: null,
    });
  });

  it('maps NonRetriableError and RetryAfterError thrown by the code to the engine classes', async () => {
    expect(await failure("throw new NonRetriableError('order 42 is cancelled');")).toMatchObject({
      name: 'NonRetriableError',
      code: 'non_retriable',
      message: 'order 42 is cancelled',
      retryable: false,
      retry_after_ms: null,
    });
    expect(await failure("throw new RetryAfterError('rate limited', 1500.4);")).toMatchObject({
      name: 'RetryAfterError',
      code: 'retry_after',
      message: 'rate limited',
      retryable: true,
      retry_after_ms: 1500,
    });
    expect(await failure("class Gone extends NonRetriableError {}\nthrow new Gone('gone');")).toMatchObject({
      code: 'non_retriable',
      message: 'gone',
    });
    expect(await failure("throw new RetryAfterError('soon', 'later');")).toMatchObject({
      code: 'code_error',
      message: 'RetryAfterError(message, ms): ms must be a delay in milliseconds, 0 or more',
    });
  });

  it('stops an endless loop with a timeout close to the limit', async () => {
    const started = performance.now();
    expect(await failure('while (true) {}', { timeout_ms: 200 })).toEqual({
      name: 'StepTimeoutError',
      code: 'timeout',
      message: 'the code ran past its 200 ms time limit',
      retryable: true,
      retry_after_ms: null,
    });
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(195);
    expect(elapsed).toBeLessThan(700);
    expect(await failure('for (;;) await null;', { timeout_ms: 200 })).toMatchObject({ code: 'timeout' });
  });

  it('fails at once, as a timeout, when the code awaits a promise nothing can settle', async () => {
    const started = performance.now();
    expect(await failure('await new Promise(() => {});', { timeout_ms: 60_000 })).toMatchObject({
      name: 'StepTimeoutError',
      code: 'timeout',
      message: 'the code awaited a promise that nothing can settle (the sandbox has no timers or I/O)',
    });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('stops a memory bomb with memory_limit', async () => {
    expect(await failure("const a = []; while (true) a.push('x'.repeat(1e6));", { timeout_ms: 30_000 })).toEqual({
      name: 'NonRetriableError',
      code: 'memory_limit',
      message: 'the code ran out of memory (limit: 64 MiB)',
      retryable: false,
      retry_after_ms: null,
    });
    expect(await failure("return 'x'.repeat(2 * 1024 * 1024);", { memory_mb: 1 })).toMatchObject({
      code: 'memory_limit',
      message: 'the code ran out of memory (limit: 1 MiB)',
    });
  });

  it('stops deep recursion and deep nesting with stack_overflow', async () => {
    const overflow = {
      name: 'NonRetriableError',
      code: 'stack_overflow',
      message: 'the code overflowed the stack (recursion or nesting too deep)',
      retryable: false,
      retry_after_ms: null,
    };
    expect(await failure('const down = (n) => down(n + 1) + 1; return down(0);')).toEqual(overflow);
    expect(await failure("return JSON.parse('['.repeat(100000));")).toEqual(overflow);
    // Nesting deep enough to exhaust V8's own stack inside the parser costs the WASM module, never the process.
    const loaded = sandboxModulesLoaded();
    expect(await failure("return eval('('.repeat(100000));")).toEqual(overflow);
    expect(sandboxModulesLoaded()).toBe(loaded + 1);
    expect(await outputOf('return input.id;')).toBe(42);
  });

  it('refuses a result that is not JSON', async () => {
    const notJson = (message: string) => ({
      name: 'NonRetriableError',
      code: 'output_not_json',
      message: `the code's result is not JSON: ${message}`,
      retryable: false,
      retry_after_ms: null,
    });
    expect(await failure('return () => 1;')).toEqual(notJson('a function is not a JSON value'));
    expect(await failure('return 10n;')).toEqual(notJson('a bigint is not a JSON value'));
    expect(await failure("return Symbol('s');")).toEqual(notJson('a symbol is not a JSON value'));
    expect(await failure('const a = { b: {} }; a.b.a = a; return a;')).toEqual(notJson('circular reference'));
    expect(await failure('return { n: 1n };')).toEqual(notJson('Do not know how to serialize a BigInt'));
  });

  it('refuses a result over 10 MiB of JSON', async () => {
    expect(await failure("return 'x'.repeat(11 * 1024 * 1024);")).toEqual({
      name: 'NonRetriableError',
      code: 'output_too_large',
      message: "the code's result is at least 11534338 bytes of JSON, over the 10 MiB limit",
      retryable: false,
      retry_after_ms: null,
    });
    // Characters are counted first; the exact UTF-8 size decides for text that is not ASCII.
    expect(await failure("return '✓'.repeat(4 * 1024 * 1024);")).toMatchObject({
      code: 'output_too_large',
      message: "the code's result is 12582914 bytes of JSON, over the 10 MiB limit",
    });
  });

  it('rejects a config it cannot run and input that is not JSON', async () => {
    expect(await failure('return 1;', { timeout_ms: 0 })).toMatchObject({
      code: 'invalid_config',
      message: 'config.timeout_ms must be a whole number from 1 to 60000.',
    });
    expect(await failure('return 1;', { memory_mb: 512 })).toMatchObject({
      code: 'invalid_config',
      message: 'config.memory_mb must be a whole number from 1 to 256.',
    });
    expect(await failure('return 1;', { reuse_context: 'yes' })).toMatchObject({
      code: 'invalid_config',
      message: 'config.reuse_context must be true or false.',
    });
    expect(await failure('return 1;', {}, { input: { big: 1n } })).toMatchObject({
      code: 'input_not_json',
      message: "the code step's input is not JSON: Do not know how to serialize a BigInt",
    });
  });

  it('stays healthy: after every kind of failure the next run works, in the same WASM module', async () => {
    const failing = [
      'const a = ;',
      "console.log('x'); throw new Error('x');",
      "throw new RetryAfterError('x', 10);",
      'while (true) {}',
      'for (;;) await null;',
      'await new Promise(() => {});',
      'const f = () => f(); f();',
      'const a = {}; a.a = a; return a;',
      "return JSON.parse('{');",
    ];
    const loaded = sandboxModulesLoaded();
    for (const code of failing) {
      await failure(code, { timeout_ms: 100 });
      expect(await outputOf('return input.items.length;')).toBe(2);
    }
    // A handle left undisposed would make QuickJS abort on dispose, and the module would be replaced.
    expect(sandboxModulesLoaded()).toBe(loaded);
  });
});

describe('runCode: isolation', () => {
  it('finds nothing of the host: no process, require, fetch, timers or Node globals', async () => {
    const probe = `return {
      process: typeof process, require: typeof require, globalProcess: typeof globalThis.process, fetch: typeof fetch,
      setTimeout: typeof setTimeout, setInterval: typeof setInterval, Buffer: typeof Buffer, WebAssembly: typeof WebAssembly,
      viaConstructor: this.constructor.constructor('return typeof process')(),
      globalNames: Object.getOwnPropertyNames(Function('return this')()).filter((name) => /^[a-z]/.test(name)).sort(),
    };`;
    expect(await outputOf(probe)).toEqual({
      process: 'undefined',
      require: 'undefined',
      globalProcess: 'undefined',
      fetch: 'undefined',
      setTimeout: 'undefined',
      setInterval: 'undefined',
      Buffer: 'undefined',
      WebAssembly: 'undefined',
      viaConstructor: 'undefined',
      globalNames: [
        'console',
        'decodeURI',
        'decodeURIComponent',
        'encodeURI',
        'encodeURIComponent',
        'escape',
        'eval',
        'globalThis',
        'isFinite',
        'isNaN',
        'parseFloat',
        'parseInt',
        'undefined',
        'unescape',
      ],
    });
    expect(await failure("return this.constructor.constructor('return process')();")).toMatchObject({
      code: 'code_error',
      message: "'process' is not defined",
    });
    expect(await failure("return require('fs');")).toMatchObject({ code: 'code_error', message: "'require' is not defined" });
  });

  it('keeps prototype pollution and globals away from runs of other code', async () => {
    expect(
      await outputOf(
        'Object.prototype.polluted = 1; Array.prototype.map = null; globalThis.leftover = 1; console.log = null; return ({}).polluted;',
      ),
    ).toBe(1);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await outputOf('return [({}).polluted ?? null, typeof [].map, typeof leftover, typeof console.log];')).toEqual([
      null,
      'function',
      'undefined',
      'function',
    ]);
  });

  it('shares a warm context only among runs of one step: same workspace, workflow, node and code', async () => {
    const code =
      "const seen = [({}).stepMark ?? null, typeof added]; Object.prototype.stepMark = 'set'; globalThis.added = 1; return seen;";
    const step = { id: 'exec-2', workflowId: 'wf-warm', workspaceId: 'ws-warm' };
    // Every thread has its own contexts (this one and each of the pool's): the runs stay on this
    // thread (inline-runs.ts) once its module is loaded, whatever the share of its time they take
    // or how long a busy machine holds one up, so consecutive runs meet the same context.
    const before = tuneInlineRuns({ sliceMs: 100, share: 1 });
    try {
      // Runs until the step's own context has served one (the first runs may go to the pool while this thread's module loads).
      const seenBySameStep = async () => {
        for (let i = 0; i < 8; i++)
          if (((await run(code, {}, { nodeId: 'warm', execution: step })).output as unknown[])[0] === 'set') return true;
        return false;
      };
      expect(await seenBySameStep()).toBe(true);
      // The global the runs added was removed after each; the built-in change is the step's own.
      expect((await run(code, {}, { nodeId: 'warm', execution: step })).output).toEqual(['set', 'undefined']);
      for (const other of [
        { execution: { ...step, workspaceId: 'ws-other' } },
        { execution: { ...step, workflowId: 'wf-other' } },
        { nodeId: 'other' },
      ]) {
        expect((await run(code, {}, { nodeId: 'warm', execution: step, ...other })).output).toEqual([null, 'undefined']);
      }
      expect((await run(code, { reuse_context: false }, { nodeId: 'warm', execution: step })).output).toEqual([null, 'undefined']);
    } finally {
      tuneInlineRuns(before);
    }
  });

  it('cannot reach the host through the console or a replaced JSON', async () => {
    const code =
      "JSON.stringify = () => 'forged'; JSON.parse = () => 1; console.log.call(null, console.log.constructor('return typeof process')()); return { real: true };";
    const result = await run(code);
    expect(result.output).toEqual({ real: true });
    expect(result.logs).toEqual(['undefined']);
  });

  it('runs interleaved executions side by side without mixing them', async () => {
    const code = 'let n = 0; for (let i = 0; i < 100000; i++) n += await i; return { id: input.id, n };';
    const [a, b] = await Promise.all([run(code, {}, { input: { id: 'a' } }), run(code, {}, { input: { id: 'b' } })]);
    expect(a.output).toEqual({ id: 'a', n: 4999950000 });
    expect(b.output).toEqual({ id: 'b', n: 4999950000 });
  });
});

describe('runCode: cancellation and work', () => {
  it('does not start when the execution is already cancelled', async () => {
    const cancel = new RunCancel();
    cancel.abort();
    expect(await failure('return 1;', {}, { cancel })).toEqual({
      name: 'StepError',
      code: 'cancelled',
      message: 'the code step was cancelled',
      retryable: false,
      retry_after_ms: null,
    });
  });

  it('stops a long chain of awaits when the execution is cancelled', async () => {
    const cancel = new RunCancel();
    setTimeout(() => cancel.abort(), 100);
    const started = performance.now();
    expect(await failure('for (;;) await null;', { timeout_ms: 10_000 }, { cancel })).toMatchObject({
      code: 'cancelled',
      retryable: false,
    });
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('counts interrupt checks as the work measure', async () => {
    const idle = await run('return 1;');
    const busy = await run('let n = 0; for (let i = 0; i < 3e6; i++) n += i; return n;');
    expect(busy.metrics?.reductions).toBeGreaterThan((idle.metrics?.reductions ?? 0) + 100);
  });
});
