import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Database } from '../schema.js';
import type { DatabaseHandle, SqlDialect } from './dialect.js';
import { TableWrites } from '../table-writes.js';
import { PgNotifier } from '../notifier.js';
import { preparingPool, StatementNames } from './prepared-statements.js';

export const postgresDialect: SqlDialect = {
  name: 'postgres',
  textType: sql`text collate "C"`,
  booleanType: 'boolean',
  doubleType: 'double precision',
  bool: (value) => value,
  distinctFrom: (left, right, negate) =>
    negate ? sql<boolean>`${left} IS NOT DISTINCT FROM ${right}` : sql<boolean>`${left} IS DISTINCT FROM ${right}`,
  // Under "C", lower() folds ASCII only; the ICU root collation folds all of Unicode, like
  // JavaScript's toLowerCase on the SQLite side (PostgreSQL must be built with ICU, as the
  // Debian, Ubuntu and official container builds are).
  lower: (expression) => sql<string>`lower((${expression}) collate "und-x-icu")`,
  // ->> yields text in the database's default collation, so strings get "C" like every text
  // column here. Numbers go through numeric, which holds any JSON number a row can carry
  // (bigint would fail on 1e20).
  jsonMember: (column, name, type) => {
    const member = sql`(${column}::jsonb ->> CAST(${name} AS text))`;
    switch (type) {
      case 'string':
        return sql`(${member} collate "C")`;
      case 'boolean':
        return sql`(${member})::boolean`;
      default:
        return sql`(${member})::numeric`;
    }
  },
  rowLocks: true,
  isUniqueViolation: (error) => (error as { code?: unknown } | null)?.code === '23505',
};

export function openPostgres(url: string, options: { max?: number } = {}): DatabaseHandle {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10 });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const writes = new TableWrites();
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool, new StatementNames()) }), plugins: [writes] });
  const notifier = new PgNotifier(url);
  return {
    db,
    dialect: postgresDialect,
    externalChanges: null,
    writes,
    notifier,
    file: null,
    close: async () => {
      await notifier.close();
      await db.destroy();
    },
  };
}
