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
import { ApprovalLinks } from './services/executions/approval-links.js';
import { ApprovalService } from './services/executions/approval-service.js';
import { errorWorkflowResolver } from './services/executions/error-workflows.js';
import { WebhookService } from './services/webhooks/webhook-service.js';
import { WebhookEndpoints } from './webhooks/webhook-endpoints.js';
import { StoreService } from './services/stores/store-service.js';
import { StoreRowService } from './services/stores/store-row-service.js';
import { StoreSweeper } from './services/stores/store-sweeper.js';
import { FeedCursors } from './services/stores/feed-cursor.js';
import { stepStoreAccess } from './api/routes/stores/step-store-access.js';
import { Metrics } from './observability/metrics.js';
import { countQueue } from './store/queue-depth.js';
import { newId } from './lib/ids.js';
import { BackgroundLoop } from './lib/background-loop.js';
import { Scheduler } from './schedules/scheduler.js';
import { ConnectionResolver } from './ai/connection-resolver.js';
import { openSearchIndexes, type VectorMode } from './knowledge/search-indexes.js';
import { createEmbeddingJobs, EMBED_DOCUMENTS } from './knowledge/embedding-jobs.js';
import { StagedHandoff } from './knowledge/staged-handoff.js';
import { ConnectionService } from './services/connections/connection-service.js';
import { KnowledgeBaseService } from './services/knowledge/knowledge-base-service.js';
import { KnowledgeDocumentService } from './services/knowledge/knowledge-document-service.js';
import { MemoryService } from './services/memories/memory-service.js';
import { createCompactionJobs } from './memory/compaction-jobs.js';
import { workflowDocumentServices } from './services/workflows/document-services.js';
import { createAgentResources } from './services/agents/agent-resources.js';
import { AppService } from './services/apps/app-service.js';
import { PlatformDirectory } from './platform/platform-directory.js';
import { PlatformTriggers } from './platform/platform-triggers.js';
import { buildPlatformEndpoints } from './platform/platform-endpoints.js';
import { SlackChat } from './platform/slack/slack-chat.js';
import { SlackOAuth } from './services/apps/slack-oauth.js';
import { DEFAULT_SLACK_API_URL } from './platform/slack/slack-web-api.js';
import type { PlatformEndpoint } from './platform/platform-routes.js';

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
  /** This process among those sharing the database (logs, leases, answer channel). */
  processId: string;
  /** Durable background work: embedding documents, re-embedding bases, compacting memories. `serve` starts it. */
  background: BackgroundLoop;
  /** Staged chunks from this process's ingests to its embedding loop. */
  stagedHandoff: StagedHandoff;
  /** Fires schedule triggers; started by `serve` in the processes that run executions. */
  scheduler: Scheduler;
  /** How vectors are searched: sqlite-vec, pgvector, or an exact scan (reported by /readyz). */
  vectorMode: VectorMode;
  /** Provider apps and installations as the platform endpoints read them (cached, secrets opened). */
  platformDirectory: PlatformDirectory;
  /** Live platform trigger nodes of active workflows. */
  platformTriggers: PlatformTriggers;
  /** The provider endpoints under /webhooks/inbound, served by the API. */
  platformEndpoints: PlatformEndpoint[];
  /** SWITCHYARD_SLACK_API_URL. */
  slackApiUrl: string;
  close(): Promise<void>;
}

/** How long the background loop gathers work before a pass (see BackgroundLoop's gatherMs). */
const BACKGROUND_GATHER_MS = 20;

/**
 * The composition root: opens the database (applying migrations and mirroring the step catalog),
 * loads the secret key and wires the services.
 */
export async function buildDeps(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'secretKey' | 'baseUrl'> &
    Partial<
      Pick<
        Config,
        | 'httpAllow'
        | 'slackApiUrl'
        | 'storeMaxRowCap'
        | 'role'
        | 'leaseMs'
        | 'heartbeatMs'
        | 'pollMs'
        | 'maxRunning'
        | 'workerConcurrency'
        | 'shutdownGraceMs'
        | 'emailAttachmentMaxBytes'
      >
    >,
  options: {
    clock?: Clock;
    database?: DatabaseHandle;
    onBackgroundError?: (error: unknown) => void;
    timers?: boolean;
    processId?: string;
    pgvector?: boolean;
  } = {},
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
  const httpAllow = config.httpAllow ?? [];
  let indexes;
  try {
    indexes = await openSearchIndexes(database, options.pgvector === undefined ? {} : { pgvector: options.pgvector });
  } catch (error) {
    await database.close();
    throw error;
  }
  const resolver = new ConnectionResolver(database.db, secretKey);
  const stagedHandoff = new StagedHandoff();
  const background = new BackgroundLoop(
    [
      ...createEmbeddingJobs({
        db: database.db,
        dialect: database.dialect.name,
        indexes,
        clock,
        secretKey,
        httpAllow,
        handoff: stagedHandoff,
      }),
      ...createCompactionJobs({ db: database.db, dialect: database.dialect.name, clock, secretKey, httpAllow }),
    ],
    // A poke waits 20 ms before the pass starts, so documents ingested meanwhile are embedded and
    // swapped in one transaction: 4 clients posting at once gave batches of 1 without it and ~5
    // with it, and ~15% less server CPU a chunk (bench:knowledge's ingest, SQLite).
    { gatherMs: BACKGROUND_GATHER_MS, onError: (error) => options.onBackgroundError?.(error) },
  );
  const poke = () => background.poke();
  const knowledgeBases = new KnowledgeBaseService(
    database.db,
    clock,
    { dialect: database.dialect.name, indexes, resolver, httpAllow, nowMs: () => clock.nowMs() },
    poke,
  );
  // The engine resolves call_workflow targets through the execution service, which needs the engine.
  let executions: ExecutionService | null = null;
  const metrics = new Metrics({ queueDepth: () => countQueue(database.db), onError: options.onBackgroundError });
  const processId = options.processId ?? newId();
  const maxRunning = config.maxRunning ?? 64;
  // Where the database can tell other processes what happened (PostgreSQL), the engine runs as
  // one of possibly several: it claims executions under leases (engine/cluster.ts).
  const cluster = database.notifier
    ? {
        processId,
        notifier: database.notifier,
        leaseMs: config.leaseMs ?? 30_000,
        heartbeatMs: config.heartbeatMs ?? 10_000,
        pollMs: config.pollMs ?? 1_000,
        maxRunning,
        runsSteps: (config.role ?? 'all') !== 'api',
      }
    : undefined;
  const apps = new AppService(database.db, database.dialect, clock, secretKey);
  const slackApiUrl = config.slackApiUrl ?? DEFAULT_SLACK_API_URL;
  const approvalLinks = new ApprovalLinks(secretKey, config.baseUrl);
  const engine = new Engine({
    db: database.db,
    clock,
    settings: {
      httpAllow: config.httpAllow ?? [],
      chat: new SlackChat(database.db, apps, clock, slackApiUrl),
      approvalLinks: approvalLinks.make,
    },
    agent: createAgentResources({ db: database.db, clock, resolver, knowledgeBases, httpAllow, poke }),
    stores: stepStoreAccess(database.db, database.dialect),
    timers: options.timers ?? true,
    maxConcurrent: cluster ? (config.workerConcurrency ?? maxRunning) : maxRunning,
    cluster,
    shutdownGraceMs: config.shutdownGraceMs ?? 0,
    metrics,
    resolveCallTarget: (request) => executions!.resolveCallTarget(request),
    resolveErrorWorkflow: errorWorkflowResolver(database.db),
    onError: (error) => options.onBackgroundError?.(error),
  });
  executions = new ExecutionService(database.db, clock, engine, stamp);
  const scheduler = new Scheduler({
    db: database.db,
    dialect: database.dialect.name,
    engine,
    clock,
    timers: options.timers ?? true,
    pollMs: config.pollMs ?? 1_000,
    onError: (error) => options.onBackgroundError?.(error),
  });
  const storeSweeper = new StoreSweeper(database.db, { clock, onError: (error) => options.onBackgroundError?.(error) });
  const stores = new StoreService(
    database.db,
    database.dialect,
    clock,
    { maxRowCap: config.storeMaxRowCap ?? DEFAULT_STORE_MAX_ROW_CAP },
    () => storeSweeper.wake(),
  );
  const slackOAuth = new SlackOAuth(apps, clock, secretKey, { baseUrl: config.baseUrl, slackApiUrl });
  const platformDirectory = new PlatformDirectory(database.db, secretKey, stamp, options.onBackgroundError);
  const platformTriggers = new PlatformTriggers(database.db, (snapshotId) => engine.planOf(snapshotId), stamp);
  return {
    database,
    db: database.db,
    dialect: database.dialect,
    clock,
    secretKey,
    baseUrl: config.baseUrl,
    identity: new IdentityService(database.db, clock),
    authenticator: new Authenticator(new TokenStore(database.db), clock, stamp, options.onBackgroundError),
    workflows: new WorkflowService(database.db, clock, { secretKey, baseUrl: config.baseUrl }, () => scheduler.poke()),
    folders: new FolderService(database.db, clock),
    listCache: stamp ? { bodies: new FreshCache<Buffer>(1000), stamp } : null,
    engine,
    executions,
    approvals: new ApprovalService(database.db, clock, engine, approvalLinks),
    webhooks: new WebhookService(database.db, clock, config.baseUrl),
    webhookEndpoints: new WebhookEndpoints(database.db, secretKey, stamp, options.onBackgroundError),
    stores,
    storeRows: new StoreRowService(database.db, database.dialect, clock, stores),
    feedCursors: new FeedCursors(secretKey),
    ...workflowDocumentServices(database.db, clock, { secretKey, baseUrl: config.baseUrl }, database.dialect.isUniqueViolation),
    storeSweeper,
    metrics,
    processId,

    connections: new ConnectionService(database.db, clock, { secretKey, httpAllow }),
    knowledgeBases,
    knowledgeDocuments: new KnowledgeDocumentService(
      database.db,
      clock,
      knowledgeBases,
      indexes,
      () => background.poke(EMBED_DOCUMENTS),
      stagedHandoff,
    ),
    memories: new MemoryService(database.db, clock, poke),
    apps,
    slackApiUrl,
    slackOAuth,
    platformDirectory,
    platformTriggers,
    platformEndpoints: buildPlatformEndpoints({
      db: database.db,
      dialect: database.dialect,
      engine,
      clock,
      directory: platformDirectory,
      triggers: platformTriggers,
      metrics,
      baseUrl: config.baseUrl,
      apps,
      slackApiUrl,
      slackOAuth,
      emailAttachmentMaxBytes: config.emailAttachmentMaxBytes,
    }),
    background,
    stagedHandoff,
    scheduler,
    vectorMode: indexes.vectorMode,
    close: async () => {
      await background.stop();
      await scheduler.stop();
      await storeSweeper.stop();
      await engine.stop();
      await indexes.close?.();
      await database.close();
    },
  };
}
