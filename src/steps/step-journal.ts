/**
 * The narrow durability interface a long step (the agent) gets from the engine.
 *
 * Terminology: a *journal entry* is one completed piece of a step's work (a model turn, a tool
 * call) stored as an execution-step row of the step's node with its own `kind`. The engine
 * commits each entry before `record` resolves, so a run that resumes the node after a crash or
 * a retry reads them back with `load` and does not do that work again. The engine ignores these
 * rows when it decides which nodes completed (engine/restore-state.ts).
 */
export const JOURNAL_KINDS = ['model_call', 'tool_call'] as const;
export type JournalKind = (typeof JOURNAL_KINDS)[number];

/** Whether an execution-step row is a journal entry of its node rather than an attempt of it. */
export function isJournalRow(row: { kind: string | null }): boolean {
  return row.kind !== null && (JOURNAL_KINDS as readonly string[]).includes(row.kind);
}

export interface JournalEntry {
  /** The row id: recording an entry again with the same id updates it (a tool call that was `running`). */
  id: string;
  kind: JournalKind;
  /** The agent's turn, from 0 (stored as `iter_index`). */
  turn: number;
  /**
   * `running`: started and not finished (a workflow tool waiting for its child execution);
   * `waiting`: a tool call waiting for a person's approval (its output holds the links).
   */
  status: 'running' | 'waiting' | 'completed';
  /** The model provider of a model call; the tool's type of a tool call. */
  provider: string | null;
  startedAt: string;
  durationMs: number | null;
  /** The child execution a workflow tool awaits, recorded before it is started. */
  childExecutionId: string | null;
  /** What replaying the entry needs (a model answer, a tool call's result): a JSON object. */
  data: Record<string, unknown>;
}

export interface StepJournal {
  /** Entries recorded by earlier attempts of this node in this frame, in the order written. */
  load(): Promise<JournalEntry[]>;
  /** Inserts (or, same id, updates) an entry; resolves once it is committed. */
  record(entry: JournalEntry): Promise<void>;
}

/** How an awaited child execution ended; `missing` when it was never committed. */
export interface CallResult {
  status: 'completed' | 'failed' | 'cancelled' | 'missing';
  output: unknown;
  error: unknown;
}

/** Child executions a step starts itself, named by ids it chose (and journaled) beforehand. */
export interface StepCalls {
  /** Commits the child execution `childId` of workflow `workflowId` with `input` as its trigger body. */
  start(request: { childId: string; workflowId: string; input: unknown; stepRowId: string }): Promise<void>;
  /** Resolves when the child ends (or at once if it has ended, or was never committed: `missing`). */
  wait(childId: string): Promise<CallResult>;
}
