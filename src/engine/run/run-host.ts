import type { ExpressionScope } from '../expressions/expression-scope.js';
import type { ChildResult, ExecutionRow, StepRow } from '../execution-store.js';
import type { FrameState, WaitingNode } from './restore-state.js';
import type { FrameEnd, RunDeps } from './run-types.js';
import type { EffectWrite } from '../commit/run-commit.js';
import type { EffectCommitted } from './run-writes.js';
import type { StepEffect } from '../../steps/step-runtime.js';
import type { StepRecord } from '../commit/step-rows.js';

/** A loop under way: its items, the results so far, and the iteration in progress. */
export interface LoopProgress {
  items: unknown[];
  results: unknown[];
  /** The iteration that is running or waiting; null between iterations. */
  current: FrameState | null;
  /** Iterations rebuilt from rows after a restart, by index, not yet run again. */
  restored: Map<number, FrameState>;
  startedAt: string;
}

/**
 * What the helpers of a run (loops, calls, the journal of model and tool calls, failed attempts)
 * use of the run that drives them. ExecutionRun implements it; the helpers import this interface
 * and not the run, so the engine's imports stay one-way (execution-run.ts -> helpers -> here).
 */
export interface RunHost {
  readonly deps: RunDeps;
  readonly execution: ExecutionRow;
  readonly loops: Map<string, LoopProgress>;
  readonly children: Map<string, ChildResult>;
  /** Waiting rows made due by a decision while the run was held here (ExecutionRun.decided). */
  readonly decided: Set<string>;
  runFrame(frame: FrameState): Promise<FrameEnd>;
  scope(frame: FrameState, input: unknown): ExpressionScope;
  row(frame: FrameState, record: StepRecord): StepRow;
  record(row: StepRow, resumedStepId?: string, final?: boolean): void;
  park(frame: FrameState, waiting: WaitingNode): void;
  /** Commits a step's effect with its completed row at once (ExecutionRun.commitEffect). */
  commitEffect(effect: StepEffect, row: StepRow, replaces: string | undefined): Promise<EffectCommitted>;
  /** A respond step's answer (JSON text), put on the execution with the run's next commit. */
  respond(response: string | null): void;
  persist(final?: Partial<ExecutionRow>, awaited?: string[], effect?: EffectWrite): Promise<boolean>;
}
