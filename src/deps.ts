import { DEFAULT_STORE_MAX_ROW_CAP, type Config } from './config.js';
import type { ApiContext } from './api/api-context.js';
import type { DatabaseHandle } from './db/dialect/dialect.js';
import { openDatabase } from './db/open-database.js';
import { migrateOrThrow } from './db/migrate.js';
import { systemClock, type Clock } from './lib/clock.js';
import { loadOrCreateSecretKey } from './lib/secret-key.js';
import { Authenticator } from './services/identity/authenticator.js';
import { IdentityService } from './services/identity/identity-service.js';
import { WorkflowService } from './services/workflows/workflow-service.js';
import { FolderService } from './services/folders/folder-service.js';
import { syncStepTemplates } from './store/step-template-repository.js';
import { TokenStore } from './store/token-repository.js';
import { startDataStamp, type DataStamp } from './db/data-stamp.js';
import { FreshCache } from './lib/fresh-cache.js';
import { stepDefinitions } from './steps/registry.js';
import { Engine } from './engine/engine.js';
import { ExecutionService } from './services/executions/execution-service.js';
import { WebhookService } from './services/webhooks/webhook-service.js';
import { WebhookEndpoints } from './webhooks/webhook-endpoints.js';
import { StoreService } from './services/stores/store-service.js';
import { StoreRowService } from './services/stores/store-row-service.js';
import { StoreSweeper } from './services/stores/store-sweeper.js';
import { FeedCursors } from './api/routes/stores/feed-cursor.js';
import { Metrics } from './observability/metrics.js';
import { countQueue } from './store/queue-depth.js';
import { workflowDocumentServices } from './services/workflows/document-services.js';

/** Everything the process runs on, built once and passed explicitly (no container). */
export interface Deps extends ApiContext {
  database: DatabaseHandle;
  clock: Clock;
  secretKey: string;
  identity: IdentityService;
  authenticator: Authenticator;
  engine: Engine;
  webhookEndpoints: WebhookEndpoints;
  /** Removes deleted stores' rows in the background; `serve` starts it. */
  storeSweeper: StoreSweeper;
  /** The process's Prometheus metrics; the engine reports through its EngineMetrics side. */
  metrics: Metrics;
  close(): Promise<void>;
}

/**
 * The composition root: opens the database (applying migrations and mirroring the step catalog),
 * loads the secret key and wires the services.
 */
export async function buildDeps(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'secretKey' | 'baseUrl'> & Partial<Pick<Config, 'httpAllow' | 'storeMaxRowCap'>>,
  options: { clock?: Clock; database?: DatabaseHandle; onBackgroundError?: (error: unknown) => void; timers?: boolean } = {},
): Promise<Deps> {
  const database = options.database ?? openDatabase(config);
  const clock = options.clock ?? systemClock;
  let stamp: DataStamp | null;
  try {
    await migrateOrThrow(database);
    await syncStepTemplates(database.db, database.dialect, stepDefinitions);
    stamp = await startDataStamp(database);
  } catch (error) {
    await database.close();
    throw error;
  }
  const secretKey = loadOrCreateSecretKey(config.dataDir, config.secretKey);
  // The engine resolves call_workflow targets through the execution service, which needs the engine.
  let executions: ExecutionService | null = null;
  const engine = new Engine({
    db: database.db,
    clock,
    settings: { httpAllow: config.httpAllow ?? [] },
    timers: options.timers ?? true,
    resolveCallTarget: (request) => executions!.resolveCallTarget(request),
    onError: (error) => options.onBackgroundError?.(error),
  });
  executions = new ExecutionService(database.db, clock, engine, stamp);
  const storeSweeper = new StoreSweeper(database.db, { onError: (error) => options.onBackgroundError?.(error) });
  const stores = new StoreService(database.db, database.dialect, clock, { maxRowCap: config.storeMaxRowCap ?? DEFAULT_STORE_MAX_ROW_CAP }, () => storeSweeper.wake());
  return {
    database,
    db: database.db,
    dialect: database.dialect,
    clock,
    secretKey,
    baseUrl: config.baseUrl,
    identity: new IdentityService(database.db, clock),
    authenticator: new Authenticator(new TokenStore(database.db), clock, stamp, options.onBackgroundError),
    workflows: new WorkflowService(database.db, clock, { secretKey, baseUrl: config.baseUrl }),
    folders: new FolderService(database.db, clock),
    listCache: stamp ? { bodies: new FreshCache<Buffer>(1000), stamp } : null,
    engine,
    executions,
    webhooks: new WebhookService(database.db, clock, config.baseUrl),
    webhookEndpoints: new WebhookEndpoints(database.db, secretKey, stamp, options.onBackgroundError),
    stores,
    storeRows: new StoreRowService(database.db, database.dialect, clock, stores),
    feedCursors: new FeedCursors(secretKey),
    ...workflowDocumentServices(database.db, clock, { secretKey, baseUrl: config.baseUrl }),
    storeSweeper,
    metrics: new Metrics({ queueDepth: () => countQueue(database.db), onError: options.onBackgroundError }),
    close: async () => {
      await storeSweeper.stop();
      await engine.stop();
      await database.close();
    },
  };
}
