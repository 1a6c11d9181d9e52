import path from 'node:path';
import type { DatabaseHandle } from './dialect/dialect.js';
import { openPostgres } from './dialect/postgres.js';
import { openSqlite } from './dialect/sqlite.js';

export function openDatabase(options: { databaseUrl: string | null; dataDir: string }): DatabaseHandle {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openSqlite(path.join(options.dataDir, 'switchyard.db'));
}
