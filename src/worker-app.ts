import Fastify, { type FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from './db/schema.js';
import type { Metrics } from './observability/metrics.js';
import { AppError } from './errors/app-error.js';
import { sendError } from './api/plugins/error-document.js';
import { requestLogOptions } from './api/plugins/request-log.js';
import { protocolOptions } from './api/plugins/protocol-options.js';
import { healthRoutes } from './api/routes/health/health-routes.js';
import { metricsRoutes } from './api/routes/metrics/metrics-routes.js';

export interface WorkerAppDeps {
  db: Kysely<Database>;
  metrics: Metrics;
  metricsToken: string | null;
  logger: Logger | false;
}

/**
 * What a `--role worker` process serves on its port: liveness, readiness and metrics, nothing
 * of the API or the webhook endpoints (those are the API processes'). Every other path is 404
 * as a JSON:API error document, like the API's.
 */
export async function buildWorkerApp(deps: WorkerAppDeps): Promise<FastifyInstance> {
  const app = Fastify({ ...requestLogOptions(deps.logger, deps.metrics), ...protocolOptions() });
  app.decorateRequest('workspaceId', null);
  app.decorateRequest('bytesBefore', 0);
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error));
  app.setNotFoundHandler((request, reply) =>
    sendError(
      request,
      reply,
      new AppError(
        'not_found',
        `no route ${request.method} ${request.url.split('?')[0]} on a worker: it serves /healthz, /readyz and /metrics`,
      ),
    ),
  );
  await app.register(async (root) => healthRoutes(root, deps.db));
  await app.register(async (root) => metricsRoutes(root, { metrics: deps.metrics, token: deps.metricsToken }));
  return app;
}
