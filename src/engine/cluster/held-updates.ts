import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { quoteIdent, StatementText } from '../../db/statement-text.js';
import { countWrite } from '../../db/table-writes.js';
import { MAX_PARAMETERS, raisedDetail, type GatheredWrites } from '../../db/transaction-buffer.js';
import type { ExecutionRow } from '../execution-store.js';
import { LeaseLostError } from '../commit/run-coordination.js';

type Db = Kysely<Database> | Transaction<Database>;

/** What `sy_held_check` (migration 0017) raises when an execution was not updated: its lease was lost. */
const HELD_CHECK_FAILED = 'SYL01';

/** SQL for the time `seconds` (SQL: a placeholder or a number) from now on the database's clock, as the engine writes timestamps: a lease's expiry. */
export const leaseExpiry = (seconds: string) =>
  `to_char((clock_timestamp() + make_interval(secs => ${seconds})) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** Updates of the same columns, sent as one statement. */
type UpdateGroup = { columns: (keyof ExecutionRow)[]; entries: [string, Partial<ExecutionRow>][] };

/** The integer columns of `executions`; every other column a run changes is text. */
const INTEGER_COLUMNS = new Set(['call_depth', 'step_count', 'concurrency_limit']);

/** Only plain values can travel in a VALUES list (not an SQL expression). */
export function gatherable(changes: Partial<ExecutionRow>): boolean {
  for (const value of Object.values(changes)) if (value !== null && typeof value === 'object') return false;
  return true;
}

/**
 * The conditional updates of the executions a worker runs (`updateHeldExecution`, `holdsLease`
 * in cluster-store.ts), gathered from every run in a group commit and written together: one
 * `UPDATE ... FROM (VALUES ...)` per set of changed columns, instead of one statement per run
 * (with 1 API and 2 workers it was the one statement left per execution, ~20% of a worker's
 * CPU time, bench/results/cluster.md). The condition is the same as each run's own statement
 * (still this worker's lease, still live), and the lease is renewed unless the changes give it
 * up; an execution the statement did not update makes the whole commit fail with
 * `LeaseLostError`, as the run's own statement did, and the group commit then retries each
 * run's writes alone, so only that run's fail. In a commit sent as one statement
 * (transaction-buffer.ts `flushAlone`) the updates are CTEs and `sy_held_check` raises instead.
 */
export class HeldUpdates implements GatheredWrites {
  readonly table = 'executions';
  private pending = new Map<string, Partial<ExecutionRow>>();

  constructor(
    private readonly owner: string,
    private readonly leaseMs: number,
  ) {}

  get empty(): boolean {
    return this.pending.size === 0;
  }

  /** False when an update of this execution is already gathered: flush first, then add again (two in one statement would land as one). */
  add(executionId: string, changes: Partial<ExecutionRow>): boolean {
    if (this.pending.has(executionId)) return false;
    this.pending.set(executionId, Object.assign({}, changes));
    return true;
  }

  get parameters(): number {
    let parameters = this.pending.size;
    for (const changes of this.pending.values()) parameters += Object.keys(changes).length + 1;
    return parameters;
  }

  async flush(trx: Db): Promise<void> {
    for (const group of this.groups()) {
      const { entries } = group;
      const statement = new StatementText();
      const result = await trx.executeQuery<{ id: string }>(statement.compile(this.update(statement, group)));
      countWrite(trx, 'executions');
      if (result.rows.length === entries.length) continue;
      const updated = new Set(result.rows.map((row) => row.id));
      throw new LeaseLostError(entries.find(([id]) => !updated.has(id))![0]);
    }
  }

  take(prefix: string, statement: StatementText): { ctes: string[]; check: string | null } {
    const groups = this.groups();
    if (groups.length === 0) return { ctes: [], check: null };
    const names = groups.map((_, index) => `${prefix}_${index}`);
    const ctes = groups.map((group, index) => `${names[index]} as (${this.update(statement, group)})`);
    const updated = names.map((name) => `select id from ${name}`).join(' union all ');
    const ids = groups.flatMap(({ entries }) => entries.map(([id]) => id));
    return { ctes, check: `sy_held_check(array(${updated}), ${statement.textList(ids)})` };
  }

  /** The check's error (migration 0017's `sy_held_check`, SQLSTATE SYL01, the execution in its detail) as `LeaseLostError`. */
  translate(error: unknown): unknown {
    const id = raisedDetail(error, HELD_CHECK_FAILED);
    return id === undefined ? undefined : new LeaseLostError(id);
  }

  /** The updates gathered, one statement per set of changed columns (and per parameter limit); forgets them. */
  private groups(): UpdateGroup[] {
    if (this.pending.size === 0) return [];
    const groups = new Map<string, [string, Partial<ExecutionRow>][]>();
    for (const entry of this.pending) {
      const key = Object.keys(entry[1]).sort().join(',');
      const group = groups.get(key);
      if (group) group.push(entry);
      else groups.set(key, [entry]);
    }
    this.pending = new Map();
    const statements: UpdateGroup[] = [];
    for (const [key, entries] of groups) {
      const columns = key === '' ? [] : (key.split(',') as (keyof ExecutionRow)[]);
      const perStatement = Math.floor(MAX_PARAMETERS / (columns.length + 1));
      for (let from = 0; from < entries.length; from += perStatement)
        statements.push({ columns, entries: entries.slice(from, from + perStatement) });
    }
    return statements;
  }

  /** One `UPDATE ... FROM (VALUES ...)` of `statement`, returning the ids it updated. */
  private update(statement: StatementText, { columns, entries }: UpdateGroup): string {
    const rows = entries.map(([id, changes]) => {
      const values = [statement.param(id, 'text')];
      for (const column of columns) values.push(statement.param(changes[column] ?? null, INTEGER_COLUMNS.has(column) ? 'integer' : 'text'));
      return `(${values.join(', ')})`;
    });
    // The lease is renewed unless the changes give it up (as `updateHeldExecution` does).
    const renew = !columns.includes('lease_owner');
    const sets = columns
      .filter((column) => !(renew && column === 'lease_expires_at'))
      .map((column) => `${quoteIdent(column)} = v.${quoteIdent(column)}`);
    if (renew) sets.push(`lease_expires_at = ${leaseExpiry(statement.param(this.leaseMs / 1000))}`);
    const names = ['id', ...columns].map(quoteIdent).join(', ');
    return `update executions as e set ${sets.join(', ')} from (values ${rows.join(', ')}) as v(${names}) where e.id = v.id and e.lease_owner = ${statement.param(this.owner)} and e.status in ('pending', 'running', 'waiting') returning e.id`;
  }
}
