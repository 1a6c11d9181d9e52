import type { Config } from '../config.js';
import { buildApp, REDACTED_HEADERS } from '../app.js';
import { buildDeps } from '../deps.js';
import { RetentionPruner } from '../engine/retention.js';

export const SERVE_ROLES = ['all', 'api'] as const;
export type ServeRole = (typeof SERVE_ROLES)[number];

/** pino options for the server: request headers logged with every secret-bearing header redacted. */
export function loggerOptions(level: string) {
  return {
    level,
    redact: { paths: REDACTED_HEADERS.map((name) => `req.headers["${name}"]`), censor: '[redacted]' },
    serializers: {
      // A webhook delivery's headers are not logged at all: a plain-HMAC node names its own
      // signature header, which no fixed redaction list can know.
      req: (request: { method: string; url: string; headers: Record<string, unknown>; ip?: string }) => ({
        method: request.method,
        url: request.url,
        ...(request.url.startsWith('/webhooks/') ? {} : { headers: request.headers }),
        remoteAddress: request.ip,
      }),
    },
  };
}

/**
 * `switchyard serve`: migrates, creates the default workspace and first token on an empty
 * database (printed once), and listens. Returns a function that shuts down cleanly.
 */
export async function serve(config: Config, role: ServeRole, out: (line: string) => void = console.log): Promise<() => Promise<void>> {
  const deps = await buildDeps(config, { onBackgroundError: (error) => console.error('engine error:', error) });
  const first = await deps.identity.bootstrap();
  const app = await buildApp({ ...deps, config, logger: loggerOptions(config.logLevel) });
  const address = await app.listen({ port: config.port, host: config.host });
  await deps.engine.start();
  const pruner = new RetentionPruner(deps.db, deps.clock, config.executionRetentionDays, (error) => app.log.error({ err: error }, 'execution retention pruning failed'));
  pruner.start();
  deps.storeSweeper.start();
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
  out(`Switchyard (${role}) listening on ${address}; API at ${config.baseUrl}/api/v1, docs at ${config.baseUrl}/api/docs; database: ${deps.dialect.name}`);
  return async () => {
    pruner.stop();
    await deps.storeSweeper.stop();
    await app.close();
    await deps.close();
  };
}
