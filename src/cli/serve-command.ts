import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { ConfigError, type Config } from '../config.js';
import { buildApp } from '../app.js';
import { buildWorkerApp } from '../worker-app.js';
import { buildDeps } from '../deps.js';
import { lockDataDir } from '../db/dialect/data-dir-lock.js';
import { RetentionPruner } from '../engine/retention.js';
import { newId } from '../lib/ids.js';
import { createLogger } from '../lib/logger.js';
import { loadTokenizer } from '../knowledge/token-counter.js';

/**
 * `switchyard serve`: migrates, creates the default workspace and first token on an empty
 * database (printed once; not by a worker), and listens. The role (`config.role`) decides what
 * the process does: `all` serves HTTP and runs executions, `api` serves HTTP and runs no step,
 * `worker` runs executions and serves only /healthz, /readyz and /metrics. On SQLite one `all`
 * process owns the data directory. Returns a function that shuts down cleanly: the HTTP server,
 * then the engine (runs in flight get the shutdown grace, then are released), the database,
 * and last the log's buffered lines.
 */
export async function serve(config: Config, out: (line: string) => void = console.log): Promise<() => Promise<void>> {
  const { role } = config;
  if (config.databaseUrl === null && role !== 'all') {
    throw new ConfigError(
      'SWITCHYARD_ROLE',
      `role "${role}" needs PostgreSQL (DATABASE_URL): on the embedded SQLite database one process serves the API and runs the executions (role all)`,
    );
  }
  const lock = config.databaseUrl === null ? lockDataDir(config.dataDir) : null;
  const processId = newId();
  const { logger, flush } = createLogger({
    level: config.logLevel,
    format: config.logFormat,
    base: { role, process_id: processId, pid: process.pid, hostname: hostname() },
  });
  let deps;
  try {
    deps = await buildDeps(config, { processId, onBackgroundError: (error) => logger.error({ err: error }, 'engine error') });
  } catch (error) {
    lock?.release();
    throw error;
  }
  const runsSteps = role !== 'api';
  // The tokenizer's ranks parse in ~0.2 s: at start, not in the first request that chunks a document.
  if (role !== 'worker') loadTokenizer();
  const first = role === 'worker' ? null : await deps.identity.bootstrap();
  const app: FastifyInstance =
    role === 'worker'
      ? await buildWorkerApp({ db: deps.db, metrics: deps.metrics, metricsToken: config.metricsToken, logger })
      : await buildApp({ ...deps, config, logger });
  const address = await app.listen({ port: config.port, host: config.host });
  await deps.engine.start();
  // Background upkeep belongs to the processes that run executions.
  const pruner = runsSteps
    ? new RetentionPruner(deps.db, deps.clock, config.executionRetentionDays, (error) =>
        logger.error({ err: error }, 'execution retention pruning failed'),
      )
    : null;
  pruner?.start();
  if (runsSteps) deps.storeSweeper.start();
  // Documents left pending by the last run (or by another process) are picked up here.
  if (runsSteps) deps.background.start();
  else deps.stagedHandoff.disable();
  // Schedules fire where executions run; on PostgreSQL several workers share them (claimed rows).
  if (runsSteps) deps.scheduler.start();
  if (first) {
    out('');
    out('First start: created the Pro workspace "default" and a build-scoped API token.');
    out('It is shown only this once; keep it somewhere safe:');
    out('');
    out(`  ${first.token}`);
    out('');
    out(`Try it: curl -H "Authorization: Bearer ${first.token}" ${config.baseUrl}/api/v1/me`);
    out('');
  }
  const serving =
    role === 'worker'
      ? `listening on ${address}; health and metrics only (/healthz, /readyz, /metrics)`
      : `listening on ${address}; API at ${config.baseUrl}/api/v1, docs at ${config.baseUrl}/api/docs`;
  out(`Switchyard (${role}) ${serving}; database: ${deps.dialect.name}; vector search: ${deps.vectorMode}`);
  const stopped = deps;
  return async () => {
    pruner?.stop();
    await app.close();
    await stopped.close();
    lock?.release();
    logger.info('stopped');
    await flush();
  };
}
