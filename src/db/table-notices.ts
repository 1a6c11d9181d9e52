import { sql, type Kysely } from 'kysely';
import type { Notifier } from './notifier.js';
import type { Database } from './schema.js';

/** The channel on which PostgreSQL names each table a committed transaction wrote (migration 0010). */
export const TABLES_CHANNEL = 'sy_tables';

/**
 * What this process has heard of other writers' commits on PostgreSQL: a version per announced
 * table, raised by each `sy_tables` message, and an epoch raised whenever messages may have been
 * missed (the listening connection was lost, and again when it is back), which changes every
 * stamp at once.
 *
 * The tables are those carrying the announcing trigger, read from the catalog at start, so a
 * later migration that adds the trigger to a table turns its caches on by itself, and a table
 * without it (the engine's) is never cached.
 */
export class TableNotices {
  private readonly versions = new Map<string, number>();
  private epoch = 0;

  private constructor(
    private readonly announced: ReadonlySet<string>,
    private readonly notifier: Notifier,
  ) {}

  /** Listens on the channel; resolves once the LISTEN is in place. */
  static async start(db: Kysely<Database>, notifier: Notifier): Promise<TableNotices> {
    const notices = new TableNotices(new Set(await announcedTables(db)), notifier);
    notifier.onLost(() => notices.missed());
    notifier.onReconnect(() => notices.missed());
    await notifier.listen(TABLES_CHANNEL, (table) => notices.bump(table));
    return notices;
  }

  /** Whether the database announces writes to every one of these tables. */
  covers(tables: readonly string[]): boolean {
    for (const table of tables) if (!this.announced.has(table)) return false;
    return true;
  }

  /**
   * The tables' version once every message committed before the call has arrived, or null when
   * that cannot be known (the listening connection is down): the caller reads the database.
   */
  async version(tables: readonly string[]): Promise<string | null> {
    if (!(await this.notifier.sync())) return null;
    return this.heardVersion(tables);
  }

  /** The tables' version from the messages that have arrived so far (others may be on their way). */
  heardVersion(tables: readonly string[]): string {
    let sum = 0;
    for (const table of tables) sum += this.versions.get(table) ?? 0;
    return `${this.epoch}.${sum}`;
  }

  private bump(table: string): void {
    this.versions.set(table, (this.versions.get(table) ?? 0) + 1);
  }

  private missed(): void {
    this.epoch += 1;
  }
}

/** Tables with an enabled announcing trigger, in the schema the connection sees. */
async function announcedTables(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select distinct c.relname as name
    from pg_trigger t
    join pg_class c on c.oid = t.tgrelid
    join pg_proc p on p.oid = t.tgfoid
    where p.proname = 'sy_announce_write' and t.tgenabled <> 'D' and pg_table_is_visible(c.oid)
  `.execute(db);
  return rows.map((row) => row.name);
}
