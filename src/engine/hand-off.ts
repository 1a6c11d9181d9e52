import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { StatementText } from '../db/statement-text.js';
import { countWrite } from '../db/table-writes.js';
import type { GatheredWrites } from '../db/transaction-buffer.js';
import type { ExecutionRow, StepRow } from './execution-store.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The lease a hand-off gives its worker until the worker has the executions: it lengthens it to
 * the full lease within a quarter of this (cluster.ts), so an execution handed to a worker that
 * died a moment before is taken over within this time and the next poll, not a full lease.
 */
export const HANDOFF_LEASE_MS = 5_000;

/** Whom a group commit of an API process may hand its new executions to. */
export interface HandOffTarget {
  /** The live workers this process knows, with the executions each said it runs at once, in the order of preference among equals. */
  workers: { id: string; capacity: number }[];
  maxRunning: number;
  leaseMs: number;
  /** The turn announced for those left `pending`. */
  turn: string;
}

/**
 * Hand-off (DESIGN.md principle 1, docs/architecture.md "Refinements"): an API process that
 * knows live workers gives them the executions it creates in the commit that creates them, each
 * to the one with the most room, within the cluster's limits, instead of announcing them for a
 * worker to claim. The claim was a round
 * trip of its own between every delivery's commit and its first step: ~2 of a light delivery's
 * ~4.3 ms on this 2-core machine (bench/results/cluster.md). Gathered like the other writes of a
 * group commit (transaction-buffer.ts): one call of `sy_admit_handing_off` (migration 0019)
 * inserts the batch's executions and step rows, assigns what the limits allow to workers whose
 * listening connection is up and notifies each, inside the commit's single statement.
 */
export class HandOff implements GatheredWrites {
  readonly table = 'executions' as const;
  private executions: ExecutionRow[] = [];
  private steps: StepRow[] = [];
  private now = '';

  constructor(private readonly target: HandOffTarget) {}

  get empty(): boolean {
    return this.executions.length === 0;
  }

  get parameters(): number {
    return 8;
  }

  /** A new `pending` execution and its first step rows. */
  add(row: ExecutionRow, steps: readonly StepRow[]): void {
    this.executions.push(row);
    for (const step of steps) this.steps.push(step);
    if (row.inserted_at > this.now) this.now = row.inserted_at;
  }

  async flush(trx: Db): Promise<void> {
    const statement = new StatementText();
    await trx.executeQuery(statement.compile(`select ${this.call(statement)}`));
    countWrite(trx, 'executions');
  }

  take(_prefix: string, statement: StatementText): { ctes: string[]; check: string | null } {
    // The call itself is the check (it answers true): the statement's select reads the checks
    // from a CTE that a volatile call keeps from being inlined, so it runs. As a CTE of its own,
    // read by a subquery of the checks, it was pruned from the plan and never ran.
    return { ctes: [], check: this.call(statement) };
  }

  translate(): unknown {
    return undefined;
  }

  private call(statement: StatementText): string {
    const { workers, maxRunning, leaseMs, turn } = this.target;
    const ids = workers.map((worker) => worker.id);
    const capacities = workers.map((worker) => worker.capacity);
    const p = (value: unknown, cast?: string) => statement.param(value, cast);
    const call = `sy_admit_handing_off(${p(JSON.stringify(this.executions), 'jsonb')}, ${p(JSON.stringify(this.steps), 'jsonb')}, ${p(this.now)}, ${p(ids, 'text[]')}, ${p(capacities, 'integer[]')}, ${p(maxRunning)}, ${p(Math.min(leaseMs, HANDOFF_LEASE_MS))}, ${p(turn)})`;
    this.executions = [];
    this.steps = [];
    return call;
  }
}

/** What a worker is told it was handed: the executions with their step rows, or only their ids (too large for a notification). */
export type HandedOff = { c: { row: ExecutionRow; steps: StepRow[] }[] } | { i: string[] };
