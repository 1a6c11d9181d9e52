import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { AgentResources } from '../../steps/agent/agent-resources.js';
import type { RunCancel } from '../../lib/cancellation.js';
import type { Clock } from '../../lib/clock.js';
import type { StepSettings, StepStoreAccess } from '../../steps/step-runtime.js';
import type { ExecutionRow } from '../execution-store.js';
import type { AttemptOutcome } from './node-runner.js';
import type { SerializedStepError } from '../step-errors.js';
import type { WriteBatcher } from '../commit/write-batcher.js';
import type { RunCoordination } from '../commit/run-coordination.js';
import type { EngineMetrics } from '../../observability/engine-metrics.js';
import type { Answers } from '../answers.js';
import type { ErrorRunPreparer } from './error-run.js';

/** The types an ExecutionRun is made of and answers with (execution-run.ts runs them). */

/** A call_workflow step asks the engine for a child execution. */
export interface ChildRequest {
  childId: string;
  parent: ExecutionRow;
  /** The parent's step row that starts the child (the child's `triggered_by_step_id`). */
  stepId: string;
  workflowId: string;
  input: unknown;
}

export type { ChildResult } from '../execution-store.js';

import type { RunEnd } from '../answers.js';

export type { RunEnd } from '../answers.js';

export interface RunDeps {
  db: Kysely<Database>;
  clock: Clock;
  batcher: WriteBatcher;
  settings: StepSettings;
  /** The stores steps may read and write (save_to_store, read_store). */
  stores?: StepStoreAccess;
  /** What the agent step reads from the workspace (built by the composition root). */
  agent?: AgentResources;
  /** Commits a child execution (and starts it when there is capacity); throws a StepError when the call cannot be made. */
  startChild(request: ChildRequest): Promise<void>;
  /** Several processes share the database: leases and notifications in every commit (cluster.ts). */
  coordination?: RunCoordination;
  metrics?: EngineMetrics;
  /** The callers waiting for an execution's answer, told a respond step's answer once the commit holding it is durable. */
  answers?: Answers;
  /** What a failed execution's commit writes about its error workflow (error-run.ts); absent: nothing. */
  errorRun?: ErrorRunPreparer;
}

/** One stretch of running (the engine attaches a new one each time it resumes the execution). */
export interface RunControl {
  /** The flight's cancellation (not an AbortSignal per run: see lib/cancellation.ts). */
  cancel: RunCancel;
  cancelled: () => boolean;
  /**
   * Told how the execution ends as soon as its final write is queued, before that commit is
   * awaited: a parent waiting for it can go on at once, and its next write joins the same group
   * commit (the batcher commits in order, so the parent's writes never land before the child's end).
   */
  ending?: (end: RunEnd) => void;
}

/** How a stretch of running begins (ExecutionRun.advance). */
export interface AdvanceOptions {
  /** Changes of the execution row as it starts running (a pending or waiting execution becoming `running`). */
  opening?: Partial<ExecutionRow>;
  /** The run is held in this process (new, queued or parked): `opening` rides on its next commit. */
  lazy?: boolean;
  /** A wait only for children is not written at once (RunEnd `deferred`; the engine writes it later). */
  deferWait?: boolean;
}

/** How a frame (the run, or one loop iteration) ended. */
export type FrameEnd =
  | { status: 'settled' | 'cancelled' }
  | { status: 'waiting'; runAt: string | null }
  | { status: 'failed'; nodeId: string; error: SerializedStepError };

/**
 * An attempt's outcome as the frame handles it. `startedAt`: the attempt began earlier (a call
 * resumed); `rowId`: the id its new row must have; `replaces`: the waiting row it replaces.
 */
export type Outcome =
  | (AttemptOutcome & { startedAt?: string; rowId?: string; replaces?: string })
  | { type: 'loop_waiting'; runAt: string | null }
  | { type: 'cancelled' };
