/** The executions' tables (schema.ts re-exports them; its storage conventions hold here too). */
export const EXECUTION_STATUSES = ['pending', 'running', 'waiting', 'completed', 'failed', 'cancelled'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];
export const STEP_STATUSES = ['pending', 'running', 'completed', 'failed', 'skipped', 'waiting'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];
/** Why a failed execution started no error workflow (docs/run-control.md "Error workflows"). */
export const ERROR_WORKFLOW_SKIPPED = ['missing', 'inactive', 'loop'] as const;
export type ErrorWorkflowSkipped = (typeof ERROR_WORKFLOW_SKIPPED)[number];

export interface ExecutionsTable {
  id: string;
  workspace_id: string;
  workflow_id: string;
  workflow_snapshot_id: string;
  status: ExecutionStatus;
  /** The parent's execution-step row that started this execution (call_workflow). */
  triggered_by_step_id: string | null;
  parent_execution_id: string | null;
  /** 0 for a top-level run; a child is its parent's depth + 1 (runaway recursion is refused). */
  call_depth: number;
  retry_of_execution_id: string | null;
  user_id: string | null;
  started_at: string | null;
  finished_at: string | null;
  inserted_at: string;
  updated_at: string;
  /** JSON text: engine state needed to resume (node outputs so far). */
  context: string | null;
  /** JSON text: the trigger payload {method, headers, query, body}. */
  inputs: string | null;
  output: string | null;
  error: string | null;
  step_count: number | null;
  /** When a pending or waiting execution is next due. */
  run_at: string | null;
  lease_owner: string | null;
  lease_expires_at: string | null;
  /** JSON text: what a respond_to_webhook step answered {status, headers, body}. */
  response: string | null;
  /** The snapshot's per-workflow concurrency limit (null: none), for claims across processes. */
  concurrency_limit: number | null;
  /** The process waiting for this execution's answer (a synchronous webhook delivery), if another may run it. */
  waiter: string | null;
  /** Run control (migration 0025): the execution this one replays, or re-runs from `rerun_from_node_id`. */
  replay_of_execution_id: string | null;
  rerun_of_execution_id: string | null;
  rerun_from_node_id: string | null;
  /** Set on an error workflow's execution: the failed execution it reports (it starts no error workflow itself). */
  error_of_execution_id: string | null;
  /** On a failed execution: the execution of its workflow's error workflow that the failure started. */
  error_workflow_execution_id: string | null;
  /** On a failed execution whose workflow names an error workflow that did not start: why (`missing`, `inactive`, `loop`). */
  error_workflow_skipped: ErrorWorkflowSkipped | null;
}

/** The decision on an approval step (migration 0026): one row per step, the first decision wins. */
export interface ApprovalDecisionsTable {
  step_id: string;
  workspace_id: string;
  execution_id: string;
  node_id: string;
  /** `approve`, `reject`, or `timed_out` (no decision before the time-out, which failed the step). */
  decision: string;
  comment: string | null;
  /** JSON text given with the decision. */
  input: string | null;
  decided_at: string;
  /** The deciding user's id, `url` (a signed link) or `timeout`. */
  decided_by: string;
}

export interface ExecutionStepsTable {
  id: string;
  workspace_id: string;
  workflow_execution_id: string;
  node_id: string;
  status: StepStatus;
  attempt: number;
  workflow_step_id: string | null;
  awaiting_workflow_execution_id: string | null;
  duration_ms: number | null;
  started_at: string | null;
  finished_at: string | null;
  iter_index: number | null;
  kind: string | null;
  loop_node_id: string | null;
  provider: string | null;
  input: string | null;
  output: string | null;
  error: string | null;
  /** JSON text: console lines a code step printed. */
  logs: string | null;
  /** JSON text: the out ports a completed step took (the engine rebuilds edge state from them). */
  ports: string | null;
  memory_bytes: number | null;
  output_bytes: number | null;
  reductions: number | string | null;
  resume_at: string | null;
  inserted_at: string;
  updated_at: string;
  /** The record this one copies (a retry's or a re-run's reused step; migration 0025). */
  reused_from_step_id: string | null;
}
