import type pg from 'pg';
import type { PostgresPool, PostgresPoolClient } from 'kysely';

/**
 * Names the SQL texts a process sends again and again, so that each PostgreSQL connection parses
 * and plans them once (a prepared statement) instead of for every execution.
 *
 * Kysely sends every query unnamed: PostgreSQL then parses and plans it anew each time. For the
 * statements on a delivery's path that was over half of their cost: the API's insert of an
 * execution spent 0.23 ms parsing and 0.14 ms planning and binding against 0.26 ms executing, a
 * worker's group commit 0.30 and 0.27 ms against 0.30 ms (PostgreSQL's statement log, 300
 * deliveries one at a time; docs/architecture.md). A named statement skips the parse on every
 * later use on its connection, and after five executions PostgreSQL keeps its generic plan when
 * that costs no more than the custom ones (always so for the inserts and updates by key),
 * skipping the plan as well.
 *
 * A text is named from its second use, so one-off texts (a list filter's `in` list of a length
 * seen once) stay unnamed. At most `cap` texts hold names at a time: each stays prepared, with
 * its plan, on every connection that ran it (a few kB to tens of kB of the server's memory).
 * When a new text would pass the cap, every name is dropped at once (a new generation): each
 * connection deallocates its statements before its next query outside a transaction, and the
 * texts in use are named afresh from their next two uses, so a long-running process keeps naming
 * what it runs now rather than what it ran first. The texts seen once are dropped when they
 * pass `trackCap` (a group commit's text can be tens of kB). Queries without parameters
 * (`begin`, `commit`) keep the simple protocol, which costs less than any prepared statement.
 *
 * A table whose columns change while the process runs (a migration run by a newer version
 * beside it) makes PostgreSQL refuse a prepared statement that reads it with `*` ("cached plan
 * must not change result type"): the text then loses its name (`forget`), and a query outside a
 * transaction is sent again unnamed (see preparingPool).
 *
 * A cached plan is not made again when the table it reads grows: PostgreSQL re-plans when the
 * table's statistics change (an ANALYZE, which autovacuum runs as the table grows), and not
 * otherwise. A generic plan made while `executions` was a few pages long (a fresh database, the
 * first seconds of a process) read the whole table for every update by id, for as long as the
 * connection lived, on a server with autovacuum off (docs/architecture.md "Cached plans on a
 * growing queue" has the figures). So each connection drops its cached plans
 * (`discard plans`: its prepared statements' and its PL/pgSQL functions'; the names stay) 1 s
 * after it opens, then after twice as long each time, up to every 60 s (`PlanRefresh`), before
 * its next query outside a transaction: the plans are made again, each at most once per period.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();
  private readonly seenOnce = new Set<string>();
  /** Names are never reused, even for a text forgotten and named again. */
  private given = 0;
  /** Raised each time the names are dropped at the cap: connections of an older one deallocate theirs. */
  generation = 0;

  constructor(
    private readonly cap = 128,
    private readonly trackCap = 1024,
  ) {}

  /** The name to send `text` under, or undefined: send it unnamed. */
  nameOf(text: string): string | undefined {
    const name = this.names.get(text);
    if (name !== undefined) return name;
    if (!this.seenOnce.has(text)) {
      if (this.seenOnce.size >= this.trackCap) this.seenOnce.clear();
      this.seenOnce.add(text);
      return undefined;
    }
    this.seenOnce.delete(text);
    if (this.names.size >= this.cap) {
      this.names.clear();
      this.generation += 1;
    }
    this.given += 1;
    const named = `sy_${this.given}`;
    this.names.set(text, named);
    return named;
  }

  /** Sends `text` unnamed from now on, until it is named afresh (after two more uses). */
  forget(text: string): void {
    this.names.delete(text);
  }

  get size(): number {
    return this.names.size;
  }
}

/** PostgreSQL's refusal of a prepared statement whose result columns changed since it was prepared. */
export function isStalePlan(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === '0A000' && typeof message === 'string' && message.includes('cached plan must not change result type');
}

/**
 * pg records on each connection the statements it prepared, and parses a name again only when it
 * is not recorded there: after `deallocate all` the record must go too. (The names of a dropped
 * generation are never sent again, so this only frees the record's memory.)
 */
function forgetPrepared(client: pg.PoolClient): void {
  const connection = (
    client as unknown as { connection?: { parsedStatements?: Record<string, string>; submittedNamedStatements?: Record<string, string> } }
  ).connection;
  if (connection?.parsedStatements) connection.parsedStatements = {};
  if (connection?.submittedNamedStatements) connection.submittedNamedStatements = {};
}

/** When each connection drops its cached plans: `firstMs` after it opens, then after twice as long each time, up to every `maxMs`. */
export interface PlanRefresh {
  readonly firstMs: number;
  readonly maxMs: number;
  now(): number;
}

export const PLAN_REFRESH: PlanRefresh = { firstMs: 1000, maxMs: 60_000, now: () => Date.now() };

/** Kysely's own transaction statements (a raw `begin`/`start transaction`, `commit`, `rollback`). */
const OPENS = /^\s*(begin|start transaction)\b/i;
const CLOSES = /^\s*(commit|rollback)\s*$/i;

/** A pool for Kysely's PostgresDialect whose clients send repeated texts as named statements. */
export function preparingPool(pool: pg.Pool, names: StatementNames, refresh: PlanRefresh = PLAN_REFRESH): PostgresPool {
  // One wrapper per pg client, so Kysely (which keeps a connection per client object) sees the
  // same client each time the pool hands it out.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    let wrapper = wrappers.get(client);
    if (wrapper) return wrapper;
    // Whether the client is inside a transaction, where a failed statement cannot be sent again.
    let inTransaction = false;
    // The generation of names this connection's prepared statements belong to.
    let generation = names.generation;
    // When this connection next drops its cached plans, and the period after that one.
    let refreshEvery = refresh.firstMs;
    let refreshAt = refresh.now() + refreshEvery;
    const query = (textOrCursor: unknown, values?: readonly unknown[]): unknown => {
      if (typeof textOrCursor !== 'string') return client.query(textOrCursor as pg.Submittable);
      const text = textOrCursor;
      if (generation !== names.generation && !inTransaction) {
        generation = names.generation;
        forgetPrepared(client);
        return client.query('deallocate all').then(() => query(text, values));
      }
      if (!inTransaction && refresh.now() >= refreshAt) {
        refreshEvery = Math.min(refreshEvery * 2, refresh.maxMs);
        refreshAt = refresh.now() + refreshEvery;
        return client.query('discard plans').then(() => query(text, values));
      }
      if (values === undefined || values.length === 0) {
        if (OPENS.test(text)) inTransaction = true;
        else if (CLOSES.test(text)) inTransaction = false;
        return client.query(text, values as unknown[]);
      }
      const name = names.nameOf(text);
      if (name === undefined) return client.query(text, values as unknown[]);
      const retry = !inTransaction;
      return client.query({ name, text, values: values as unknown[] }).catch((error: unknown) => {
        if (!isStalePlan(error)) throw error;
        names.forget(text);
        if (!retry) throw error;
        return client.query(text, values as unknown[]);
      });
    };
    wrapper = { query: query as PostgresPoolClient['query'], release: () => client.release() };
    wrappers.set(client, wrapper);
    return wrapper;
  };
  return {
    connect: async () => wrap(await pool.connect()),
    end: () => pool.end(),
  };
}
