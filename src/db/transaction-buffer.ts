import {
  type Kysely,
  type KyselyPlugin,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type Transaction,
  type UnknownRow,
} from 'kysely';
import type { Database } from './schema.js';
import { insertRows, StatementText } from './statement-text.js';
import { countWrite } from './table-writes.js';

type Db = Kysely<Database> | Transaction<Database>;
export type BufferedTable = 'executions' | 'execution_steps';

/** PostgreSQL's limit on the parameters of one statement, with room to spare. */
export const MAX_PARAMETERS = 60_000;

/**
 * Writes of one kind that a buffer gathers from the batch's writers into few statements (the
 * engine's conditional updates of executions, engine/held-updates.ts). Flushed with their
 * table's rows, after them.
 */
export interface GatheredWrites {
  readonly table: BufferedTable;
  /** It only checks (a condition the commit must meet), writing nothing: not counted as a write of its table. */
  readonly checksOnly?: boolean;
  readonly empty: boolean;
  /** Parameters its statement parts take. */
  readonly parameters: number;
  /** Sends what was gathered, in the transaction. */
  flush(trx: Db): Promise<void>;
  /**
   * What was gathered as parts of one statement (`flushAlone`), written into `statement`'s
   * parameters: CTEs (`name as (...)`) named from `prefix`, and a condition that raises an
   * error when their writes did not all land; forgets it.
   */
  take(prefix: string, statement: StatementText): { ctes: string[]; check: string | null };
  /** The error a failed check raised, as the gatherer's own error (else undefined). */
  translate(error: unknown): unknown;
}

/**
 * The detail of a database error raised with SQLSTATE `sqlState` (a gathered write's check: the
 * id it failed on), else undefined: what `translate` reads.
 */
export function raisedDetail(error: unknown, sqlState: string): string | undefined {
  const { code, detail } = (error ?? {}) as { code?: string; detail?: string };
  return code === sqlState && detail ? detail : undefined;
}

/**
 * Rows and notifications that a group commit on PostgreSQL gathers from all its writers and
 * sends at its end in a few statements: one multi-row INSERT per table and one `pg_notify` over
 * arrays, instead of a statement (a round trip to the server, a wake-up of its backend) for each
 * run's each row. Measured with 1 API and 2 workers on this 2-core machine
 * (bench/results/cluster.md): a delivery cost ~8 statements, and the socket writes of those
 * statements alone were a quarter to a third of every process's CPU time.
 *
 * Nothing changes for what the transaction's readers see: a statement that reads or changes a
 * buffered table inside the transaction first flushes it (`flushBuffered`), and the commit
 * flushes what is left. Rows go in the order of `tables` (a row's table after the tables it
 * references), notifications after them; PostgreSQL delivers a transaction's notifications at its
 * commit in any case, and collapses identical ones, as `notify` does here.
 */
export class TransactionBuffer {
  private readonly rows = new Map<BufferedTable, Record<string, unknown>[]>();
  private channels: string[] = [];
  private payloads: string[] = [];
  private readonly sent = new Set<string>();
  private readonly gathered = new Map<string, GatheredWrites>();

  constructor(private readonly tables: readonly BufferedTable[]) {
    for (const table of tables) this.rows.set(table, []);
  }

  /** Queues a row; false when this buffer does not hold that table (the caller inserts it now). */
  insert(table: BufferedTable, row: object): boolean {
    const rows = this.rows.get(table);
    if (!rows) return false;
    rows.push(row as Record<string, unknown>);
    return true;
  }

  /** The gatherer named `key` of this transaction, made by `make` on first use. */
  gatherer<T extends GatheredWrites>(key: string, make: () => T): T {
    let gatherer = this.gathered.get(key);
    if (!gatherer) {
      gatherer = make();
      this.gathered.set(key, gatherer);
    }
    return gatherer as T;
  }

  notify(channel: string, payload: string): void {
    const key = `${channel}\n${payload}`;
    if (this.sent.has(key)) return;
    this.sent.add(key);
    this.channels.push(channel);
    this.payloads.push(payload);
  }

  /**
   * Sends the queued rows of `upTo` and of the tables before it (those its rows may reference),
   * or of every table; notifications wait for `flushAll`.
   */
  async flushRows(trx: Db, upTo?: BufferedTable): Promise<void> {
    // A flush is statements; gathered writes send theirs as compiled text, which no plugin sees.
    scopes.get(trx)?.refuse();
    const last = upTo === undefined ? this.tables.length - 1 : this.tables.indexOf(upTo);
    for (let index = 0; index <= last; index += 1) {
      const table = this.tables[index]!;
      const rows = this.rows.get(table)!;
      if (rows.length > 0) {
        this.rows.set(table, []);
        const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / columnCount(rows)));
        for (let from = 0; from < rows.length; from += perStatement) {
          await trx
            .insertInto(table)
            // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rows of the table named, as queued
            .values(rows.slice(from, from + perStatement) as any)
            .execute();
        }
      }
      for (const gatherer of this.gathered.values()) if (gatherer.table === table && !gatherer.empty) await gatherer.flush(trx);
    }
  }

  /** Everything queued: the rows, then the notifications. Called before the commit. */
  async flushAll(trx: Db): Promise<void> {
    await this.flushRows(trx);
    if (this.channels.length === 0) return;
    const { channels, payloads } = this.takeNotifications();
    // flushRows above refused if this is the buffering stand-in: compiled text is safe here.
    const statement = new StatementText();
    const text =
      channels.length === 1
        ? `select pg_notify(${statement.param(channels[0])}, ${statement.param(payloads[0])})`
        : `select pg_notify(n.c, n.p) from ${notificationRows(statement, channels, payloads)}`;
    await trx.executeQuery(statement.compile(text));
  }

  /**
   * Everything queued, outside any transaction (the writes of a batch that only buffered, see
   * `bufferingScope`): one statement, whose data-modifying CTEs insert the rows and make the
   * gathered writes, and whose select checks those and sends the notifications; atomic as any
   * single statement, without the round trips of BEGIN and COMMIT. Where it would pass
   * PostgreSQL's parameter limit, a transaction of `flushAll` instead.
   */
  async flushAlone(db: Kysely<Database>): Promise<void> {
    let parameters = this.channels.length * 2;
    for (const rows of this.rows.values()) parameters += rows.length * columnCount(rows);
    const gathered = [...this.gathered.values()].filter((gatherer) => !gatherer.empty);
    for (const gatherer of gathered) parameters += gatherer.parameters;
    if (parameters > MAX_PARAMETERS) {
      await db.transaction().execute((trx) => this.flushAll(trx));
      return;
    }
    // Written by hand (statement-text.ts), not with the query builder: this is every group commit's statement.
    const statement = new StatementText();
    const ctes: string[] = [];
    const written: string[] = [];
    for (const table of this.tables) {
      const rows = this.rows.get(table)!;
      if (rows.length === 0) continue;
      ctes.push(`w${ctes.length} as (${insertRows(statement, table, rows)})`);
      this.rows.set(table, []);
      written.push(table);
    }
    const checks: string[] = [];
    gathered.forEach((gatherer, index) => {
      const parts = gatherer.take(`g${index}`, statement);
      ctes.push(...parts.ctes);
      if (parts.check) checks.push(parts.check);
      if (!gatherer.checksOnly) written.push(gatherer.table);
    });
    const { channels, payloads } = this.takeNotifications();
    // Writes that wrote nothing need no statement (a gathered write may be its check alone: a call that writes).
    if (ctes.length === 0 && checks.length === 0 && channels.length === 0) return;
    // The checks in a CTE the select reads: it is evaluated (raising when a write did not land) before any notification is sent.
    if (checks.length > 0) ctes.push(`checked as (select ${checks.join(' and ')} as ok)`);
    let select: string;
    if (channels.length === 0) select = checks.length > 0 ? 'select 1 from checked' : 'select 1';
    else
      select = `select pg_notify(n.c, n.p) from ${checks.length > 0 ? 'checked, ' : ''}${notificationRows(statement, channels, payloads)}`;
    const text = ctes.length > 0 ? `with ${ctes.join(', ')} ${select}` : select;
    try {
      await db.executeQuery(statement.compile(text));
    } catch (error) {
      for (const gatherer of gathered) {
        const own = gatherer.translate(error);
        if (own !== undefined) throw own;
      }
      throw error;
    }
    for (const table of written) countWrite(db, table);
  }

  private takeNotifications(): { channels: string[]; payloads: string[] } {
    const taken = { channels: this.channels, payloads: this.payloads };
    this.channels = [];
    this.payloads = [];
    this.sent.clear();
    return taken;
  }
}

/** The notifications as rows `n(c, p, i)` of `statement`, ordered as queued (`with ordinality ... order by`), for a `from` clause. */
function notificationRows(statement: StatementText, channels: string[], payloads: string[]): string {
  return `unnest(${statement.textList(channels)}, ${statement.textList(payloads)}) with ordinality as n(c, p, i) order by n.i`;
}

function columnCount(rows: Record<string, unknown>[]): number {
  const columns = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) columns.add(key);
  return Math.max(1, columns.size);
}

const buffers = new WeakMap<object, TransactionBuffer>();

/** Attaches a buffer to a transaction (the group commit that will flush it). */
export function attachBuffer(trx: Transaction<Database>, buffer: TransactionBuffer): void {
  buffers.set(trx, buffer);
}

/** The buffer of this transaction (or buffering scope), if its owner attached one. */
export function transactionBuffer(db: Db): TransactionBuffer | undefined {
  return buffers.get(db);
}

/**
 * Sends the rows queued in this transaction for `table` (and the tables before it), before a
 * statement that reads or changes that table.
 */
export async function flushBuffered(db: Db, table: BufferedTable): Promise<void> {
  const buffer = transactionBuffer(db);
  if (buffer) await buffer.flushRows(db, table);
}

/**
 * A stand-in transaction that only buffers. A group commit first runs its writes against one:
 * when none of them ran a statement of its own (they only inserted rows, made gathered writes and
 * sent notifications, as a new execution or a step's result does), the buffer goes out as one
 * statement (`flushAlone`). A statement refuses to run on it and marks it `refused`; the group
 * commit then runs the writes again in a real transaction, whether or not the write let the
 * refusal through.
 */
export class BufferingScope {
  readonly buffer: TransactionBuffer;
  readonly db: Transaction<Database>;
  refused = false;

  constructor(db: Kysely<Database>, tables: readonly BufferedTable[]) {
    this.buffer = new TransactionBuffer(tables);
    this.db = db.withPlugin(new RefuseStatements(this)) as unknown as Transaction<Database>;
    buffers.set(this.db, this.buffer);
    scopes.set(this.db, this);
  }

  /** A statement was about to run here: marks the scope and throws. */
  refuse(): never {
    this.refused = true;
    throw new StatementRefused();
  }
}

const scopes = new WeakMap<object, BufferingScope>();

/** Thrown by a statement on a buffering scope. */
export class StatementRefused extends Error {
  constructor() {
    super('a statement ran in a buffering scope; the group commit runs its writes in a transaction');
    this.name = 'StatementRefused';
  }
}

class RefuseStatements implements KyselyPlugin {
  constructor(private readonly scope: BufferingScope) {}

  transformQuery(): RootOperationNode {
    return this.scope.refuse();
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}
