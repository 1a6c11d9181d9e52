import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Graph } from '../graph/graph-types.js';
import type { Clock } from '../lib/clock.js';
import type { StepSettings, StepStoreAccess } from '../steps/step-runtime.js';
import type { AgentResources } from '../steps/agent/agent-resources.js';
import type { ClusterSettings } from './cluster/cluster.js';
import type { EngineMetrics } from '../observability/engine-metrics.js';
import type { ExecutionObserver } from './answers.js';
import type { ErrorWorkflowResolver } from './run/error-run.js';

export type { ExecutionObserver } from './answers.js';
export type { ErrorWorkflowResolver } from './run/error-run.js';

/** What callers give the engine (engine.ts): its options, a run to start, and an observer of one. */

/** What a call_workflow step runs: the snapshot of the target workflow (the caller decides which). */
export type CallTargetResolver = (request: {
  workspaceId: string;
  workflowId: string;
  parentSnapshotId: string;
}) => Promise<{ snapshotId: string; graph?: Graph }>;

export interface EngineOptions {
  db: Kysely<Database>;
  clock: Clock;
  settings: StepSettings;
  /** What the agent step reads from the workspace (connections, knowledge, stores, memory). */
  agent?: AgentResources;
  /** The stores save_to_store and read_store use (built in deps.ts); without it they fail `not_available`. */
  stores?: StepStoreAccess;
  /** Executions running at once in this process; more wait `pending`, in order. */
  maxConcurrent?: number;
  /**
   * Several processes share the database (PostgreSQL): executions are claimed under leases and
   * news travels by notification (cluster.ts). Absent: this process owns every execution (SQLite).
   */
  cluster?: ClusterSettings;
  /** On `stop()`, how long runs in flight may go on before they are stopped (and, in a cluster, released). */
  shutdownGraceMs?: number;
  /** Real timers for waits and retries; tests with a manual clock call `runDue()` instead. */
  timers?: boolean;
  /** Queued executions past which new top-level runs wait for room (default ADMISSION_QUEUE_LIMIT). */
  admissionQueueLimit?: number;
  /** Resolves call_workflow targets (the service layer: workspace scoping, active or draft). */
  resolveCallTarget?: CallTargetResolver;
  /** Resolves a failed execution's error workflow (the service layer); absent: failures start none. */
  resolveErrorWorkflow?: ErrorWorkflowResolver;
  onError?: (error: unknown, executionId: string) => void;
  /** Pauses before a run that failed here is taken up again (default RECOVERY_DELAYS_MS, run-recovery.ts). */
  recoveryDelaysMs?: readonly number[];
  /** What the engine reports for the process's metrics (observability/engine-metrics.ts). */
  metrics?: EngineMetrics;
}

/** How a caller runs one execution (Engine.run). */
export interface RunOptions {
  /** When the engine's queue is full, how long to wait for room before EngineBusyError (default: as long as it takes). */
  admissionTimeoutMs?: number;
}

export interface StartRun {
  workspaceId: string;
  workflowId: string;
  snapshotId: string;
  /** The snapshot's graph when the caller has it in hand (a draft run); else loaded on a cache miss. */
  graph?: Graph;
  userId: string | null;
  /** The trigger payload `{method, headers, query, body}`. */
  trigger: unknown;
  /** Root nodes that fire (default: every root); the others are recorded skipped. */
  firedRoots?: string[];
  /** Told when a respond step's answer and the end are committed (synchronous webhooks). */
  observer?: ExecutionObserver;
  /** A write committed in the same transaction as the execution (a webhook's idempotency key). */
  alsoWrite?: (trx: Transaction<Database>, executionId: string) => Promise<void>;
  /** Where the run comes from: the execution it replays (run control, docs/run-control.md). */
  replayOf?: string;
}
