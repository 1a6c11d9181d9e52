import type { FastifyInstance } from 'fastify';
import { AppError } from '../../../errors/app-error.js';
import { safeEqual, sha256Hex } from '../../../lib/secrets.js';
import { METRICS_CONTENT_TYPE, type Metrics } from '../../../observability/metrics.js';
import { JSONAPI_MEDIA_TYPE, sendError } from '../../plugins/error-document.js';

export interface MetricsRouteOptions {
  metrics: Metrics;
  /** SWITCHYARD_METRICS_TOKEN: when set, scrapes must send it as a bearer token. */
  token: string | null;
}

const ERROR_RESPONSE = { description: 'JSON:API error document', content: { [JSONAPI_MEDIA_TYPE]: { schema: { type: 'object' } } } };

/**
 * `GET /metrics`, the Prometheus exposition. Open by default, as Prometheus endpoints usually
 * are, on the listen address (127.0.0.1 unless HOST says otherwise); with SWITCHYARD_METRICS_TOKEN
 * it needs `Authorization: Bearer <token>`, compared in constant time (the digests are compared,
 * so not even the length leaks). A plugin of its own, answering its refusal itself, so the
 * worker's small app mounts it as it is.
 */
export async function metricsRoutes(app: FastifyInstance, options: MetricsRouteOptions): Promise<void> {
  const expected = options.token === null ? null : sha256Hex(options.token);
  app.get(
    '/metrics',
    {
      schema: {
        tags: ['Health'],
        summary: 'Prometheus metrics of this process (a bearer token only when SWITCHYARD_METRICS_TOKEN is set)',
        security: [{}, { metricsToken: [] }],
        response: {
          200: { description: 'Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } },
          401: ERROR_RESPONSE,
        },
      },
    },
    async (request, reply) => {
      if (expected !== null) {
        const match = /^Bearer[ ]+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
        if (!match || !safeEqual(sha256Hex(match[1]!), expected)) {
          reply.header('www-authenticate', 'Bearer');
          return sendError(
            request,
            reply,
            new AppError('unauthorized', 'the metrics need "Authorization: Bearer <SWITCHYARD_METRICS_TOKEN>"'),
          );
        }
      }
      return reply.type(METRICS_CONTENT_TYPE).send(await options.metrics.render());
    },
  );
}
