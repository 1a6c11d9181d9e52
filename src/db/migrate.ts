import { Migrator, type Migration, type MigrationResultSet } from 'kysely';
import type { DatabaseHandle, SqlDialect } from './dialect/dialect.js';
import * as foundation from './migrations/0001-foundation.js';
import * as stepTemplates from './migrations/0002-step-templates.js';
import * as executions from './migrations/0003-executions.js';
import * as webhooks from './migrations/0004-webhooks.js';
import * as leanExecutionIndexes from './migrations/0005-lean-execution-indexes.js';
import * as stores from './migrations/0006-stores.js';
import * as scaleOut from './migrations/0007-scale-out.js';
import * as knowledge from './migrations/0008-knowledge.js';
import * as workflowDocuments from './migrations/0009-workflow-documents.js';
import * as sharedState from './migrations/0010-shared-state.js';
import * as platformApps from './migrations/0011-platform-apps.js';
import * as schedules from './migrations/0012-schedules.js';
import * as knowledgeExactVectors from './migrations/0013-knowledge-exact-vectors.js';
import * as scheduleIntervalMs from './migrations/0015-schedule-interval-ms.js';
import * as storeRestores from './migrations/0016-store-restores.js';
import * as claimFunction from './migrations/0017-claim-function.js';
import * as claimGenericPlans from './migrations/0018-claim-generic-plans.js';
import * as handOff from './migrations/0019-hand-off.js';
import * as leanQueueScans from './migrations/0020-lean-queue-scans.js';
import * as endpointChecks from './migrations/0021-endpoint-checks.js';
import * as handOffPresenceLocks from './migrations/0022-hand-off-presence-locks.js';
import * as handOffEntries from './migrations/0023-hand-off-entries.js';
import * as handOffChunks from './migrations/0024-hand-off-chunks.js';
import * as runControl from './migrations/0025-run-control.js';
import * as approvals from './migrations/0026-approvals.js';

type DialectMigration = { up(db: Parameters<Migration['up']>[0], dialect: SqlDialect): Promise<void> };

/** Migrations in order; names are permanent once released. */
const MIGRATIONS: Record<string, DialectMigration> = {
  '0001-foundation': foundation,
  '0002-step-templates': stepTemplates,
  '0003-executions': executions,
  '0004-webhooks': webhooks,
  '0005-lean-execution-indexes': leanExecutionIndexes,
  '0006-stores': stores,
  '0007-scale-out': scaleOut,
  '0008-knowledge': knowledge,
  '0009-workflow-documents': workflowDocuments,
  '0010-shared-state': sharedState,
  '0011-platform-apps': platformApps,
  '0012-schedules': schedules,
  '0013-knowledge-exact-vectors': knowledgeExactVectors,
  '0015-schedule-interval-ms': scheduleIntervalMs,
  '0016-store-restores': storeRestores,
  '0017-claim-function': claimFunction,
  '0018-claim-generic-plans': claimGenericPlans,
  '0019-hand-off': handOff,
  '0020-lean-queue-scans': leanQueueScans,
  '0021-endpoint-checks': endpointChecks,
  '0022-hand-off-presence-locks': handOffPresenceLocks,
  '0023-hand-off-entries': handOffEntries,
  '0024-hand-off-chunks': handOffChunks,
  '0025-run-control': runControl,
  '0026-approvals': approvals,
};

/** Applies pending migrations. Like Kysely's migrator it reports instead of throwing. */
export async function migrateToLatest(handle: DatabaseHandle): Promise<MigrationResultSet> {
  const migrations: Record<string, Migration> = {};
  for (const [name, migration] of Object.entries(MIGRATIONS)) {
    migrations[name] = { up: (db) => migration.up(db, handle.dialect) };
  }
  const migrator = new Migrator({
    db: handle.db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'switchyard_migrations',
    migrationLockTableName: 'switchyard_migrations_lock',
  });
  return migrator.migrateToLatest();
}

/** Migrates or throws with the failing migration's name; for start-up and tests. */
export async function migrateOrThrow(handle: DatabaseHandle): Promise<string[]> {
  const { error, results = [] } = await migrateToLatest(handle);
  if (error) {
    const failed = results.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
