import type { Kysely } from 'kysely';
import type { Database, ExecutionStatus } from '../db/schema.js';
import type { Graph } from '../graph/graph-types.js';
import { parseTimestampMicros, type Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { FreshCache } from '../lib/fresh-cache.js';
import type { StepSettings } from '../steps/step-runtime.js';
import { findStepDefinition } from '../steps/registry.js';
import { advanceExecution } from './execution-run.js';
import { findExecution, insertExecution, listDue, listResumable, listSteps, nextDueAt, updateExecution, type ExecutionRow, type StepRow } from './execution-store.js';
import { planGraph, type GraphPlan } from './graph-plan.js';
import { restoreState } from './restore-state.js';
import { json, stepRow } from './step-rows.js';
import { WriteBatcher } from './write-batcher.js';
import { isTerminal } from './statuses.js';

export interface EngineOptions {
  db: Kysely<Database>;
  clock: Clock;
  settings: StepSettings;
  /** Executions running at once in this process; more wait `pending`, in order. */
  maxConcurrent?: number;
  /** Real timers for waits and retries; tests with a manual clock call `runDue()` instead. */
  timers?: boolean;
  onError?: (error: unknown, executionId: string) => void;
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
}

interface InFlight {
  controller: AbortController;
  cancelled: boolean;
  done: Promise<void>;
}

/**
 * The in-process engine. The executions table is the queue: an execution is created (with its
 * trigger step) in one commit before anyone is told its id, then run here directly, with no
 * polling on the hot path. Waits and retries leave the execution `waiting` with `run_at`; a
 * timer (or `runDue()`) picks it up again, also after a restart (`start()` resumes executions
 * left running or due). See ARCHITECTURE.md.
 */
export class Engine {
  readonly batcher: WriteBatcher;
  private readonly plans = new FreshCache<GraphPlan>(500);
  private readonly inFlight = new Map<string, InFlight>();
  private readonly maxConcurrent: number;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /**
   * Whether `pending` executions may be queued in the database. A freed slot looks for them only
   * then: querying after every finished execution would cost a read per run at full throughput.
   */
  private mayHavePending = true;
  /** Bumped whenever an execution is queued pending, so a look-up racing with it does not clear the flag. */
  private pendingEpoch = 0;
  /** Slots taken by executions being committed (decided `running`, not yet launched). */
  private reserved = 0;
  /** Due passes under way (a freed slot starts one), so `idle()` can wait for what they start. */
  private readonly duePasses = new Set<Promise<void>>();

  constructor(private readonly options: EngineOptions) {
    this.batcher = new WriteBatcher(options.db);
    this.maxConcurrent = options.maxConcurrent ?? 64;
  }

  /** Resumes executions a previous process left running, and those already due. */
  async start(): Promise<void> {
    this.stopped = false;
    const rows = await listResumable(this.options.db, this.options.clock.now(), 10_000);
    for (const row of rows) this.dispatch(row);
    await this.scheduleTimer();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const run of this.inFlight.values()) run.controller.abort();
    await Promise.allSettled([...this.inFlight.values()].map((run) => run.done));
    await this.batcher.drain();
  }

  /** Creates an execution (committed before returning) and starts it when capacity allows. */
  async run(start: StartRun): Promise<{ execution_id: string; status: ExecutionStatus }> {
    const now = this.options.clock.now();
    const plan = await this.loadPlan(start.snapshotId, start.graph);
    const id = newId();
    const fired = new Set(start.firedRoots ?? plan.roots);
    const base = { executionId: id, workspaceId: start.workspaceId, now };
    const steps: StepRow[] = plan.roots.map((nodeId) => {
      const node = plan.nodes.get(nodeId)!;
      if (!fired.has(nodeId)) return stepRow({ ...base, nodeId, status: 'skipped', attempt: 1, startedAt: null, finishedAt: null, durationMs: null, kind: node.type });
      // A trigger's output is the trigger payload; other roots run with it as their input.
      if (findStepDefinition(node.type)?.trigger) {
        return stepRow({ ...base, nodeId, status: 'completed', attempt: 1, startedAt: now, finishedAt: now, durationMs: 0, kind: node.type, output: start.trigger, ports: ['out'] });
      }
      return null;
    }).filter((row): row is StepRow => row !== null);
    return this.admit(
      {
        id,
        workspace_id: start.workspaceId,
        workflow_id: start.workflowId,
        workflow_snapshot_id: start.snapshotId,
        triggered_by_step_id: null,
        parent_execution_id: null,
        call_depth: 0,
        retry_of_execution_id: null,
        user_id: start.userId,
        context: null,
        inputs: json(start.trigger),
      },
      plan,
      steps,
    );
  }

  /**
   * Retries a failed execution as a new one, linked by `retry_of_execution_id`: same snapshot
   * and trigger payload, the completed and skipped steps copied over (outputs kept, so they do
   * not run again), and the run continues from the step that failed.
   */
  async retry(failed: ExecutionRow, userId: string | null): Promise<{ execution_id: string; status: ExecutionStatus }> {
    const plan = await this.loadPlan(failed.workflow_snapshot_id);
    const id = newId();
    const kept = (await listSteps(this.options.db, failed.id)).filter((row) => row.status === 'completed' || row.status === 'skipped' || (row.status === 'failed' && row.ports !== null));
    const steps = kept.map((row) => ({ ...row, id: newId(), workflow_execution_id: id }));
    const { id: _old, status: _status, ...same } = failed;
    return this.admit({ ...same, id, retry_of_execution_id: failed.id, user_id: userId }, plan, steps);
  }

  /**
   * Commits a new execution with its first step rows, `running` when this process has capacity
   * (and starts it), else `pending` for `runDue` to pick up in order.
   */
  private async admit(
    identity: Omit<ExecutionRow, 'status' | 'started_at' | 'finished_at' | 'inserted_at' | 'updated_at' | 'output' | 'error' | 'step_count' | 'run_at' | 'lease_owner' | 'lease_expires_at' | 'response'>,
    plan: GraphPlan,
    steps: StepRow[],
  ): Promise<{ execution_id: string; status: ExecutionStatus }> {
    const now = this.options.clock.now();
    // The slot is taken before the commit is awaited, so concurrent admissions cannot overbook.
    const status: ExecutionStatus = this.inFlight.size + this.reserved < this.maxConcurrent ? 'running' : 'pending';
    if (status === 'running') this.reserved += 1;
    if (status === 'pending') {
      this.mayHavePending = true;
      this.pendingEpoch += 1;
    }
    const row: ExecutionRow = {
      ...identity,
      status,
      started_at: status === 'running' ? now : null,
      finished_at: null,
      inserted_at: now,
      updated_at: now,
      output: null,
      error: null,
      step_count: steps.length,
      run_at: status === 'pending' ? now : null,
      lease_owner: null,
      lease_expires_at: null,
      response: null,
    };
    try {
      await this.batcher.write((trx) => insertExecution(trx, row, steps));
    } finally {
      if (status === 'running') this.reserved -= 1;
    }
    if (status === 'running') this.launch(row, plan, steps);
    return { execution_id: row.id, status };
  }

  /**
   * Cancels a pending, running or waiting execution: the row moves to `cancelled` first (so no
   * step starts afterwards), then the running step is aborted. Returns the new status, or the
   * terminal status it already had (the caller answers 409 then).
   */
  async cancel(execution: ExecutionRow): Promise<{ cancelled: boolean; status: ExecutionStatus }> {
    if (isTerminal(execution.status)) return { cancelled: false, status: execution.status };
    const now = this.options.clock.now();
    let moved = false;
    await this.batcher.write(async (trx) => {
      moved = await updateExecution(trx, execution.id, { status: 'cancelled', finished_at: now, updated_at: now, run_at: null }, ['pending', 'running', 'waiting']);
    });
    const run = this.inFlight.get(execution.id);
    if (run) {
      run.cancelled = true;
      run.controller.abort();
    }
    if (!moved) {
      const current = await findExecution(this.options.db, execution.id);
      return { cancelled: false, status: current?.status ?? execution.status };
    }
    return { cancelled: true, status: 'cancelled' };
  }

  /** Runs every due pending or waiting execution (the timer calls this; so do tests). */
  runDue(): Promise<void> {
    const pass = this.duePass().finally(() => this.duePasses.delete(pass));
    this.duePasses.add(pass);
    return pass;
  }

  private async duePass(): Promise<void> {
    const capacity = this.maxConcurrent - this.inFlight.size - this.reserved;
    if (capacity > 0) {
      const epoch = this.pendingEpoch;
      const due = await listDue(this.options.db, this.options.clock.now(), capacity);
      // Fewer due rows than free slots: the queue is drained, unless something was queued meanwhile.
      if (due.length < capacity && epoch === this.pendingEpoch) this.mayHavePending = false;
      for (const row of due) if (!this.inFlight.has(row.id)) this.dispatch(row);
    }
    await this.scheduleTimer();
  }

  /** Resolves when no execution is in flight in this process (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0 || this.duePasses.size > 0) {
      await Promise.allSettled([...this.inFlight.values()].map((run) => run.done));
      await Promise.allSettled([...this.duePasses]);
    }
    await this.batcher.drain();
  }

  /**
   * The plan of a snapshot. Snapshots never change, so plans are cached by id and the graph is
   * read (and parsed) only on a miss: not on every run of an active workflow.
   */
  private async loadPlan(snapshotId: string, graph?: Graph): Promise<GraphPlan> {
    const cached = this.plans.get(snapshotId, '');
    if (cached) return cached;
    let source = graph;
    if (!source) {
      const snapshot = await this.options.db.selectFrom('workflow_snapshots').select('graph').where('id', '=', snapshotId).executeTakeFirst();
      if (!snapshot) throw new Error(`snapshot ${snapshotId} is missing`);
      source = JSON.parse(snapshot.graph) as Graph;
    }
    const plan = planGraph(source);
    this.plans.set(snapshotId, '', plan);
    return plan;
  }

  /** Loads an execution's snapshot and steps, then runs it. */
  private dispatch(row: ExecutionRow): void {
    this.track(row.id, async (run) => {
      const plan = await this.loadPlan(row.workflow_snapshot_id);
      const steps = await listSteps(this.options.db, row.id);
      const now = this.options.clock.now();
      const started = await updateExecution(this.options.db, row.id, { status: 'running', run_at: null, updated_at: now, started_at: row.started_at ?? now }, ['pending', 'running', 'waiting']);
      if (!started) return;
      await this.advance({ ...row, status: 'running' }, plan, steps, run);
    });
  }

  private launch(row: ExecutionRow, plan: GraphPlan, steps: StepRow[]): void {
    this.track(row.id, (run) => this.advance(row, plan, steps, run));
  }

  private track(id: string, body: (run: InFlight) => Promise<void>): InFlight {
    const run: InFlight = { controller: new AbortController(), cancelled: false, done: Promise.resolve() };
    this.inFlight.set(id, run);
    run.done = body(run)
      .catch((error: unknown) => this.options.onError?.(error, id))
      .finally(() => {
        this.inFlight.delete(id);
        // A slot is free: start the oldest pending execution, if any may be queued.
        if (!this.stopped && this.mayHavePending) void this.runDue().catch((error: unknown) => this.options.onError?.(error, id));
      });
    return run;
  }

  private async advance(row: ExecutionRow, plan: GraphPlan, steps: StepRow[], run: InFlight): Promise<void> {
    const restored = restoreState(plan, steps);
    const end = await advanceExecution({ clock: this.options.clock, batcher: this.batcher, settings: this.options.settings }, row, plan, restored, {
      signal: run.controller.signal,
      cancelled: () => run.cancelled || this.stopped,
    });
    if (end.status === 'waiting') await this.scheduleTimer();
  }

  private async scheduleTimer(): Promise<void> {
    if (!this.options.timers || this.stopped) return;
    const next = await nextDueAt(this.options.db);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (next === null) return;
    const delay = Math.max(0, Math.floor((parseTimestampMicros(next) ?? 0) / 1000) - this.options.clock.nowMs());
    // Timers longer than ~24 days overflow; a shorter re-check is harmless.
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.runDue().catch(() => {});
    }, Math.min(delay, 2 ** 31 - 1));
    this.timer.unref?.();
  }
}
