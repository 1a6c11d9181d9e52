import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Database } from '../schema.js';
import type { DatabaseHandle, SqlDialect } from './dialect.js';

export const postgresDialect: SqlDialect = {
  name: 'postgres',
  booleanType: 'boolean',
  doubleType: 'double precision',
  bool: (value) => value,
  distinctFrom: (left, right, negate) =>
    negate ? sql<boolean>`${left} IS NOT DISTINCT FROM ${right}` : sql<boolean>`${left} IS DISTINCT FROM ${right}`,
  lower: (expression) => sql<string>`lower(${expression})`,
};

export function openPostgres(url: string, options: { max?: number } = {}): DatabaseHandle {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10 });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: postgresDialect,
    close: () => db.destroy(),
  };
}
