import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Cancellation } from '../lib/cancellation.js';
import type { Clock } from '../lib/clock.js';
import type { AgentResources } from './agent/agent-resources.js';
import type { StepCalls, StepJournal } from './step-journal.js';
import type { ChatApi } from './chat-reply/chat-api.js';

/**
 * What a step's runtime sees: its resolved config and input, nothing of the engine or the
 * database (steps get a narrow context; the engine never hands them a service locator).
 */
export interface StepRunContext {
  nodeId: string;
  /** The node's config with every `{{ … }}` expression already evaluated. Read-only: parts without expressions are the plan's own (frozen) objects. */
  config: Record<string, unknown>;
  /** The output of the node feeding this one; with several incoming edges, an object keyed by source node id. */
  input: unknown;
  /** Outputs of the nodes completed so far, by node id. */
  nodes: Record<string, unknown>;
  /** The trigger payload `{method, headers, query, body}`. */
  trigger: unknown;
  /**
   * Aborted when the execution is cancelled or the engine stops. `cancel.signal` is an
   * AbortSignal for libraries that take one, made on first read (see lib/cancellation.ts).
   */
  cancel: Cancellation;
  clock: Clock;
  /** 1 for the first attempt. */
  attempt: number;
  /**
   * The node sets its own `retry` policy. A step that otherwise retries inside its attempt (the
   * agent's model calls, ai/provider-retry.ts) then leaves every retry to that policy.
   */
  nodeRetryPolicy?: boolean;
  execution: { id: string; workflowId: string; workspaceId: string };
  settings: StepSettings;
  /**
   * The durable journal of this node's attempts (the agent's model turns and tool calls), kept
   * by the engine as execution-step rows of the node. Absent where no engine runs the step.
   */
  journal?: StepJournal;
  /** Child executions the step starts and awaits itself (the agent's workflow tools). */
  calls?: StepCalls;
  /** Approvals the step waits for inside its attempt (the agent's tools with `requires_approval`). */
  approvals?: StepApprovals;
  /** The workspace's resources the agent step reads (connections, knowledge, stores, memory). */
  agent?: AgentResources;
  /** The workspace's stores, for save_to_store and read_store; absent where none were wired (unit tests). */
  stores?: StepStoreAccess;
}

/**
 * A write that must commit with the step's completion: the engine runs it inside the very
 * transaction that records the step completed, and it resolves to the step's output. Throwing
 * (a StepError) fails the step and rolls the write back, so a row exists exactly when its step
 * is recorded completed, and an attempt lost in a crash left nothing behind to write twice.
 */
export type StepEffect = (trx: Transaction<Database>) => Promise<unknown>;

/** One store row as steps see it. */
export interface StepStoreRow {
  key: string;
  row: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  workflow_id: string | null;
  execution_id: string | null;
}

export interface StepStoreWrite {
  workspaceId: string;
  storeId: string;
  key: string;
  row?: unknown;
  mode: 'upsert' | 'insert' | 'update' | 'delete';
  workflowId: string;
  executionId: string;
  now: string;
}

/**
 * What steps may do with stores, and nothing more (no service locator). Every call is scoped by
 * workspace: a store of another workspace is unknown. Failures are NonRetriableErrors.
 */
export interface StepStoreAccess {
  /** The row write as an effect (see StepEffect); validated (schema, cap, key, mode) when it runs. */
  write(request: StepStoreWrite): StepEffect;
  get(request: { workspaceId: string; storeId: string; key: string }): Promise<StepStoreRow | null>;
  /** Rows in change-feed order (updated_at, key), filtered with the row list API's filter language. */
  list(request: { workspaceId: string; storeId: string; filter?: Record<string, unknown>; limit: number }): Promise<StepStoreRow[]>;
}

/** Process-wide settings some runtimes need (from Config). */
export interface StepSettings {
  /** Hosts/CIDRs the http step may reach despite the private-address guard (SWITCHYARD_HTTP_ALLOW). */
  httpAllow: readonly string[];
  /** Posting as a workspace's installed chat bot (chat_reply); absent: the step fails as not available. */
  chat?: ChatApi;
  /** The signed decision links of a waiting approval step (services/executions/approval-links.ts); absent: null links. */
  approvalLinks?: ApprovalLinkMaker;
}

/** A decision on an approval, as a step reads it (engine/approval-store.ts). */
export interface StepDecision {
  decision: 'approve' | 'reject' | 'timed_out';
  comment: string | null;
  input: unknown;
  decided_at: string;
  decided_by: string;
}

/**
 * Approvals a step waits for inside its attempt, each named by one of the step's journal rows
 * (its `output.approval` holds the links and `expires_at`). The step throws `WaitForApproval`
 * (engine/step-errors.ts) to park until a decision or the time-out; resumed, it reads the decision.
 */
export interface StepApprovals {
  /** The signed links of the approval named by `stepId`, valid until `expiresAt`. */
  links(stepId: string, expiresAt: string): { approve_url: string | null; reject_url: string | null };
  /** Its decision, if any; with `timedOut`, the time-out's (`timed_out`) unless a decision came first. */
  decision(stepId: string, timedOut: boolean): Promise<StepDecision | null>;
}

/** The one-time links that decide a waiting approval step, valid until `expiresAt`. */
export type ApprovalLinkMaker = (target: { executionId: string; stepId: string; expiresAt: string }) => {
  approve_url: string;
  reject_url: string;
};

/** Measurements a runtime reports for the step row. */
export interface StepMetrics {
  memory_bytes?: number;
  reductions?: number;
  provider?: string;
  kind?: string;
}

/**
 * A runtime's result. `output` goes to the next nodes (through `ports`, default the step's
 * first out port); `logs` stay on the step record. Failures are thrown (see engine/step-errors).
 */
export interface StepResult {
  output: unknown;
  /** The out ports taken (if, switch: one; default: ['out']). */
  ports?: string[];
  logs?: string[];
  metrics?: StepMetrics;
  /** A write committed with the step's completion; its result replaces `output` (see StepEffect). */
  effect?: StepEffect;
}

export type StepRuntime = (context: StepRunContext) => Promise<StepResult>;
