import { sql } from 'kysely';
import {
  isJournalRow,
  JOURNAL_KINDS,
  type CallResult,
  type JournalEntry,
  type StepCalls,
  type StepJournal,
} from '../../steps/step-journal.js';
import { NonRetriableError } from '../step-errors.js';
import type { RunHost } from './run-host.js';
import { listEndedChildren, type StepRow } from '../execution-store.js';
import type { FrameState } from './restore-state.js';

/** Set on a journal row's output inside a loop body: which iteration the entry belongs to. */
const LOOP_INDEX = 'loop_index';

/** How often a workflow tool's wait looks for its child's end in the database (another process may run it). */
const CHILD_POLL_MS = 250;
/** How often it looks at what this process was told in the meantime (a child run here ends in a few ms). */
const CHILD_LOCAL_POLL_MS = 5;

/**
 * The nodes of each run that have journal rows (by frame key), known from the rows the run was
 * restored from and from what it recorded since: a node with none skips the journal's query on
 * its first attempt (measured in bench/results/agent.md: the query is part of each run's overhead).
 */
const journaled = new WeakMap<RunHost, Set<string>>();

const frameKey = (loopNodeId: string | null, loopIndex: number | null, nodeId: string, output: string | null = null): string => {
  // A row inside a loop body carries its iteration in its output (see LOOP_INDEX).
  const index =
    loopNodeId === null
      ? null
      : (loopIndex ?? (output === null ? {} : (JSON.parse(output) as Record<string, unknown>))[LOOP_INDEX] ?? null);
  return `${loopNodeId ?? ''}/${index ?? ''}/${nodeId}`;
};

/** Notes which nodes of a run have journal rows among the rows it starts from (flights/flights.ts). */
export function noteJournaledRows(run: RunHost, rows: readonly StepRow[]): void {
  const keys = new Set<string>();
  for (const row of rows) if (isJournalRow(row)) keys.add(frameKey(row.loop_node_id, null, row.node_id, row.output));
  journaled.set(run, keys);
}

/**
 * The journal of one node in one frame, kept as execution-step rows of the node (`kind`
 * `model_call` / `tool_call`, the turn in `iter_index`). Every entry goes through the run's
 * own commit path (`persist`: the lease check on PostgreSQL, the cancelled check), so an entry
 * that `record` reports committed is durable and belongs to the run that holds the execution.
 */
export function nodeJournal(run: RunHost, frame: FrameState, nodeId: string, attempt: number): StepJournal {
  const loopIndex = frame.iteration?.index ?? null;
  // Rows this journal knows to exist (loaded or recorded): recording one again updates it.
  const known = new Set<string>();
  const key = frameKey(frame.iteration?.nodeId ?? null, loopIndex, nodeId);
  return {
    async load() {
      // Only a run built from rows knows for sure there are none (a run made here by hand does not).
      if (journaled.get(run)?.has(key) === false) return [];
      const rows = await run.deps.db
        .selectFrom('execution_steps')
        .selectAll()
        .where('workflow_execution_id', '=', run.execution.id)
        .where('node_id', '=', nodeId)
        .where('kind', 'in', [...JOURNAL_KINDS])
        .where(loopIndex === null ? sql<boolean>`loop_node_id is null` : sql<boolean>`loop_node_id = ${frame.iteration!.nodeId}`)
        .orderBy('inserted_at')
        .orderBy('id')
        .execute();
      const entries: JournalEntry[] = [];
      for (const row of rows) {
        const data = row.output === null ? {} : (JSON.parse(row.output) as Record<string, unknown>);
        if ((data[LOOP_INDEX] ?? null) !== loopIndex) continue;
        delete data[LOOP_INDEX];
        known.add(row.id);
        entries.push({
          id: row.id,
          kind: row.kind as JournalEntry['kind'],
          turn: row.iter_index ?? 0,
          status: row.status === 'running' || row.status === 'waiting' ? row.status : 'completed',
          provider: row.provider,
          startedAt: row.started_at ?? row.inserted_at,
          durationMs: row.duration_ms,
          childExecutionId: row.awaiting_workflow_execution_id,
          data,
        });
      }
      return entries;
    },
    async record(entry) {
      const now = run.deps.clock.now();
      const output = loopIndex === null ? entry.data : Object.assign({}, entry.data, { [LOOP_INDEX]: loopIndex });
      const row = run.row(frame, {
        id: entry.id,
        nodeId,
        status: entry.status,
        attempt,
        startedAt: entry.startedAt,
        finishedAt: entry.status === 'completed' ? now : null,
        durationMs: entry.durationMs,
        kind: entry.kind,
        provider: entry.provider,
        output,
        awaitingExecutionId: entry.childExecutionId,
        now,
      });
      // The turn, not the loop iteration: journal rows are set aside before loops are rebuilt.
      row.iter_index = entry.turn;
      if (entry.status === 'completed' && entry.startedAt !== now) row.inserted_at = entry.startedAt;
      run.record(row, known.has(entry.id) ? entry.id : undefined, false);
      known.add(entry.id);
      journaled.get(run)?.add(key);
      if (!(await run.persist())) throw new NonRetriableError('the execution ended (cancelled) while the step ran', { code: 'cancelled' });
    },
  };
}

/** Child executions started by a step of this run and awaited inside its attempt. */
export function nodeCalls(run: RunHost, cancelled: () => boolean): StepCalls {
  return {
    async start(request) {
      await run.deps.startChild({
        childId: request.childId,
        parent: run.execution,
        stepId: request.stepRowId,
        workflowId: request.workflowId,
        input: request.input,
      });
    },
    async wait(childId) {
      const db = run.deps.db;
      if (!(await db.selectFrom('executions').select('id').where('id', '=', childId).executeTakeFirst()))
        return { status: 'missing', output: null, error: null };
      let sinceDbMs = 0;
      while (true) {
        const told = run.children.get(childId);
        if (told) {
          run.children.delete(childId);
          return told as CallResult;
        }
        if (cancelled()) throw new NonRetriableError('the execution was cancelled while a workflow tool ran', { code: 'cancelled' });
        if (sinceDbMs >= CHILD_POLL_MS) {
          sinceDbMs = 0;
          const [ended] = await listEndedChildren(db, [childId]);
          if (ended)
            return {
              status: ended.status as CallResult['status'],
              output: ended.output === null ? null : JSON.parse(ended.output),
              error: ended.error === null ? null : JSON.parse(ended.error),
            };
        }
        await new Promise((resolve) => setTimeout(resolve, CHILD_LOCAL_POLL_MS));
        sinceDbMs += CHILD_LOCAL_POLL_MS;
      }
    },
  };
}
