import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * The schedule config's interval is `interval_ms` (DESIGN.md, "schedule config"), so the
 * `schedules` row keeps it in the same unit under the same name: no conversion sits between
 * the node and the row, and sub-second parts (1500 ms) are not rounded away. PostgreSQL needs
 * bigint: the longest interval, a year, is 31,536,000,000 ms, past int4. SQLite integers are
 * 64-bit already. Rows written before (seconds) are converted in place.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema.alterTable('schedules').renameColumn('interval_seconds', 'interval_ms').execute();
  if (dialect.name === 'postgres')
    await db.schema
      .alterTable('schedules')
      .alterColumn('interval_ms', (c) => c.setDataType('bigint'))
      .execute();
  await sql`update schedules set interval_ms = interval_ms * 1000 where interval_ms is not null`.execute(db);
}
