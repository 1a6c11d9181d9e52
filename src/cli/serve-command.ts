import { hostname } from 'node:os';
import type { Config } from '../config.js';
import { buildApp } from '../app.js';
import { buildDeps } from '../deps.js';
import { RetentionPruner } from '../engine/retention.js';
import { createLogger } from '../lib/logger.js';

export const SERVE_ROLES = ['all', 'api'] as const;
export type ServeRole = (typeof SERVE_ROLES)[number];

/**
 * `switchyard serve`: migrates, creates the default workspace and first token on an empty
 * database (printed once), and listens. Returns a function that shuts down cleanly: the HTTP
 * server, the engine and the database, then the log's buffered lines.
 */
export async function serve(config: Config, role: ServeRole, out: (line: string) => void = console.log): Promise<() => Promise<void>> {
  const { logger, flush } = createLogger({ level: config.logLevel, format: config.logFormat, base: { role, pid: process.pid, hostname: hostname() } });
  const deps = await buildDeps(config, { onBackgroundError: (error) => logger.error({ err: error }, 'engine error') });
  const first = await deps.identity.bootstrap();
  const app = await buildApp({ ...deps, config, logger });
  const address = await app.listen({ port: config.port, host: config.host });
  await deps.engine.start();
  // Documents left pending by the last run (or by another process) are picked up here.
  deps.background.start();
  const pruner = new RetentionPruner(deps.db, deps.clock, config.executionRetentionDays, (error) => logger.error({ err: error }, 'execution retention pruning failed'));
  pruner.start();
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
  out(`Switchyard (${role}) listening on ${address}; API at ${config.baseUrl}/api/v1, docs at ${config.baseUrl}/api/docs; database: ${deps.dialect.name}; vector search: ${deps.vectorMode}`);
  return async () => {
    pruner.stop();
    await app.close();
    await deps.close();
    logger.info('stopped');
    await flush();
  };
}
