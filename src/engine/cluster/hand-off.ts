import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { StatementText } from '../../db/statement-text.js';
import { countWrite } from '../../db/table-writes.js';
import type { GatheredWrites } from '../../db/transaction-buffer.js';
import type { ExecutionRow, StepRow } from '../execution-store.js';

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
 * group commit (transaction-buffer.ts): one call of `sy_admit_handing_off` (migrations 0019-0024)
 * inserts the batch's executions and step rows, assigns what the limits allow to workers whose
 * listening connection is up and notifies each, inside the commit's single statement.
 */
export class HandOff implements GatheredWrites {
  readonly table = 'executions' as const;
  /** The JSON of each new execution's row, of each of their step rows, and of each one's notification entry (`{"row": ..., "steps": [...]}`). */
  private executions: string[] = [];
  private steps: string[] = [];
  private entries: string[] = [];
  private now = '';

  constructor(private readonly target: HandOffTarget) {}

  get empty(): boolean {
    return this.executions.length === 0;
  }

  get parameters(): number {
    return 9;
  }

  /** A new `pending` execution and its first step rows: each serialised once, for its insert and its worker's notification alike. */
  add(row: ExecutionRow, steps: readonly StepRow[]): void {
    const rowJson = JSON.stringify(row);
    // In the order a worker reads a run's steps (execution-store.ts listSteps).
    const stepJson = [...steps].sort(byInsertion).map((step) => JSON.stringify(step));
    this.executions.push(rowJson);
    for (const json of stepJson) this.steps.push(json);
    this.entries.push(`{"row":${rowJson},"steps":[${stepJson.join(',')}]}`);
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
    const call = `sy_admit_handing_off(${p(`[${this.executions.join(',')}]`, 'jsonb')}, ${p(`[${this.steps.join(',')}]`, 'jsonb')}, ${statement.textList(this.entries)}, ${p(this.now)}, ${statement.textList(ids)}, ${p(capacities, 'integer[]')}, ${p(maxRunning)}, ${p(Math.min(leaseMs, HANDOFF_LEASE_MS))}, ${p(turn)})`;
    this.executions = [];
    this.steps = [];
    this.entries = [];
    return call;
  }
}

/**
 * What a worker is told it was handed: the executions with their step rows as the API process
 * wrote them (`pending`), with the lease (`l`) and the time (`n`) the hand-off wrote them with;
 * or only the ids of executions each too large for a notification, whose rows the worker reads.
 * A commit sends a worker as many of these as its executions need (migration 0024).
 */
export type HandedOff = { c: { row: ExecutionRow; steps: StepRow[] }[]; l: string; n: string } | { i: string[] };

/**
 * A handed execution's row as `sy_admit_handing_off` inserted it for `owner` (migration 0020,
 * EXECUTION_VALUES, the values for a row given to a worker), made from the row the API process
 * wrote: the hand-off notification carries that row and the values decided for the batch.
 */
export function handedRow(row: ExecutionRow, owner: string, leaseExpiresAt: string, now: string): ExecutionRow {
  return Object.assign({}, row, {
    status: 'running',
    started_at: row.started_at ?? now,
    updated_at: now,
    run_at: null,
    lease_owner: owner,
    lease_expires_at: leaseExpiresAt,
  });
}

/** Step rows in the order they were written (inserted_at, then id). */
function byInsertion(a: StepRow, b: StepRow): number {
  if (a.inserted_at !== b.inserted_at) return a.inserted_at < b.inserted_at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
