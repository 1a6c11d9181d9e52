import { NonRetriableError, RetryAfterError, StepError, StepTimeoutError } from '../../engine/step-errors.js';
import type { StepResult, StepRunContext, StepRuntime } from '../step-runtime.js';
import { CODE_HEADER, type SandboxFailure } from './sandbox.js';
import { runSandboxed } from './inline-runs.js';

export const DEFAULT_TIMEOUT_MS = 5_000;
export const MAX_TIMEOUT_MS = 60_000;
export const DEFAULT_MEMORY_MB = 64;
export const MAX_MEMORY_MB = 256;
export const MAX_LOG_LINES = 1_000;
export const MAX_LOG_BYTES = 64 * 1024;
export const LOGS_TRUNCATED = '… further console output dropped (limit: 1000 lines or 64 KiB)';

const MIB = 1024 * 1024;

interface CodeConfig {
  code: string;
  timeoutMs: number;
  memoryMb: number;
  /** `reuse_context`, default true: runs of this step may reuse its warm sandbox context (warm-contexts.ts). */
  reuseContext: boolean;
}

/**
 * The code step: `config.code` runs as the body of `async (input, nodes, trigger) => { … }` in
 * a QuickJS sandbox, on this thread while it is small, else on a worker thread (inline-runs.ts,
 * sandbox-pool.ts); the JSON value it returns is the step's output and its console lines are
 * the step's logs. Every way it can fail is one of the engine's error classes with a fixed code
 * (see `toStepError`). The sandbox context may be one an earlier run of the same step left
 * warm: same workspace, workflow, node and code (the reuse key below; see warm-contexts.ts),
 * unless the step sets `reuse_context: false`.
 */
export const runCode: StepRuntime = async (context) => {
  const config = readCodeConfig(context.config);
  if (context.cancel.aborted) throw cancelled();
  const logs = new LogCapture();
  let outcome;
  try {
    outcome = await runSandboxed({
      code: config.code,
      argumentsJson: serializeArguments(context),
      reuseKey: config.reuseContext ? reuseKey(context) : null,
      timeoutMs: config.timeoutMs,
      memoryBytes: config.memoryMb * MIB,
      cancel: context.cancel,
      maxLogLines: MAX_LOG_LINES,
      maxLogBytes: MAX_LOG_BYTES,
      onLog: (line) => logs.add(line),
    });
  } catch (error) {
    if (error instanceof StepError) throw error;
    // The host side of the sandbox failed (not the user's code), or its worker died: worth another attempt on a fresh module.
    throw new StepError(`the code sandbox failed: ${error instanceof Error ? error.message : String(error)}`, { code: 'sandbox_failed' });
  }
  if (!outcome.ok) throw toStepError(outcome.failure, config, logs.lines);
  return {
    output: parseOutput(outcome.json),
    logs: logs.lines,
    metrics: { kind: 'code', memory_bytes: outcome.memoryBytes, reductions: outcome.interrupts },
  } satisfies StepResult;
};

function readCodeConfig(config: Record<string, unknown>): CodeConfig {
  const { code, reuse_context: reuseContext = true } = config;
  if (typeof code !== 'string' || code === '') throw invalid('config.code must be a non-empty string.');
  if (typeof reuseContext !== 'boolean') throw invalid('config.reuse_context must be true or false.');
  return {
    code,
    timeoutMs: readLimit(config, 'timeout_ms', MAX_TIMEOUT_MS, DEFAULT_TIMEOUT_MS),
    memoryMb: readLimit(config, 'memory_mb', MAX_MEMORY_MB, DEFAULT_MEMORY_MB),
    reuseContext,
  };
}

/** The step a warm context belongs to: its workspace first, so no context ever crosses workspaces. */
const reuseKey = ({ execution, nodeId }: StepRunContext) => `${execution.workspaceId}\n${execution.workflowId}\n${nodeId}`;

function readLimit(config: Record<string, unknown>, field: string, max: number, fallback: number): number {
  const value = config[field] ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw invalid(`config.${field} must be a whole number from 1 to ${max}.`);
  }
  return value;
}

const invalid = (detail: string) => new NonRetriableError(detail, { code: 'invalid_config' });

function serializeArguments(context: StepRunContext): string {
  try {
    return JSON.stringify({ input: context.input, nodes: context.nodes, trigger: context.trigger });
  } catch (error) {
    throw new NonRetriableError(`the code step's input is not JSON: ${(error as Error).message}`, { code: 'input_not_json' });
  }
}

/** The sandbox's JSON.stringify made this text, so it parses; a failure here is the sandbox's, not the code's. */
function parseOutput(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch (error) {
    throw new StepError(`the code sandbox returned unreadable JSON: ${(error as Error).message}`, { code: 'sandbox_failed' });
  }
}

const cancelled = () => new StepError('the code step was cancelled', { code: 'cancelled', retryable: false });

/** The sandbox's outcome in the engine's vocabulary; the captured console lines ride along in `details.logs`. */
function toStepError(failure: SandboxFailure, config: CodeConfig, logs: string[]): StepError {
  const withLogs = (details: Record<string, unknown> = {}) => {
    const all = logs.length > 0 ? Object.assign({}, details, { logs }) : details;
    return Object.keys(all).length > 0 ? all : undefined;
  };
  switch (failure.kind) {
    case 'syntax': {
      // The wrapper's closing line comes after the body; an error found there belongs to the body's last line.
      const line = failure.line === null ? null : Math.min(failure.line, config.code.split('\n').length);
      return new NonRetriableError(line === null ? failure.message : `${failure.message} (line ${line})`, {
        code: 'code_syntax_error',
        details: { line },
      });
    }
    case 'thrown': {
      const { error } = failure;
      const stack = userFrames(error.stack);
      const thrown: Record<string, unknown> = {};
      if (error.name !== null) thrown.name = error.name;
      if (stack !== '') thrown.stack = stack;
      const details = withLogs(thrown);
      if (error.kind === 'non_retriable') return new NonRetriableError(error.message, { details });
      if (error.kind === 'retry_after') {
        const delay = Number.isFinite(error.retryAfterMs) && error.retryAfterMs! >= 0 ? error.retryAfterMs! : 0;
        return new RetryAfterError(error.message, delay, { details });
      }
      return new StepError(error.message, { code: 'code_error', details });
    }
    case 'timeout':
      return new StepTimeoutError(`the code ran past its ${config.timeoutMs} ms time limit`);
    case 'never_settles':
      // Failing now rather than at the deadline: with no timers or I/O in the sandbox, waiting cannot change the answer.
      return new StepTimeoutError('the code awaited a promise that nothing can settle (the sandbox has no timers or I/O)');
    case 'cancelled':
      return cancelled();
    case 'memory':
      return new NonRetriableError(`the code ran out of memory (limit: ${config.memoryMb} MiB)`, {
        code: 'memory_limit',
        details: withLogs(),
      });
    case 'stack':
      return new NonRetriableError('the code overflowed the stack (recursion or nesting too deep)', {
        code: 'stack_overflow',
        details: withLogs(),
      });
    case 'not_json':
      return new NonRetriableError(`the code's result is not JSON: ${failure.message}`, { code: 'output_not_json', details: withLogs() });
    case 'too_large':
      return new NonRetriableError(
        `the code's result is ${failure.atLeast ? 'at least ' : ''}${failure.bytes} bytes of JSON, over the 10 MiB limit`,
        {
          code: 'output_too_large',
          details: withLogs(),
        },
      );
    case 'reset':
      return new StepError('the code sandbox was reset while this run waited; it can run again', { code: 'sandbox_reset' });
  }
}

/** The sandbox's own frames (the error classes' constructors) say nothing to the author; first-line columns lose the wrapper. */
function userFrames(stack: string): string {
  return stack
    .split('\n')
    .filter((frame) => frame.trim() !== '' && !frame.includes('prelude.js:'))
    .map((frame) =>
      frame.replace(/\(code\.js:1:(\d+)\)/, (_, column: string) => `(code.js:1:${Math.max(1, Number(column) - CODE_HEADER.length)})`),
    )
    .join('\n');
}

/** Console lines up to 1000 lines and 64 KiB, then one marker: logs are for reading, not a data channel. */
class LogCapture {
  readonly lines: string[] = [];
  private bytes = 0;
  private full = false;

  /** Returns true once full, which tells the sandbox to stop sending lines. */
  add(line: string): boolean {
    if (this.full) return true;
    const size = Buffer.byteLength(line);
    if (this.lines.length < MAX_LOG_LINES && this.bytes + size <= MAX_LOG_BYTES) {
      this.lines.push(line);
      this.bytes += size;
      return false;
    }
    // The part of an oversized line that still fits is kept: often the part that matters.
    const room = this.lines.length < MAX_LOG_LINES ? MAX_LOG_BYTES - this.bytes : 0;
    if (room > 0) this.lines.push(Buffer.from(line).subarray(0, room).toString());
    this.lines.push(LOGS_TRUNCATED);
    this.full = true;
    return true;
  }
}
