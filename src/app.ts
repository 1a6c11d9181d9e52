import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import qs from 'qs';
import type { Config } from './config.js';
import type { ApiContext } from './api/api-context.js';
import { JSONAPI_MEDIA_TYPE, sendError } from './api/plugins/error-document.js';
import { registerMediaType } from './api/plugins/media-type.js';
import { registerAuthentication } from './api/plugins/authenticate.js';
import { registerBodyMemberCheck } from './api/plugins/body-members.js';
import { registerQueryNameCheck } from './api/plugins/query-names.js';
import { registerApiRateLimit } from './api/plugins/rate-limit.js';
import { SharedRateLimits } from './api/plugins/shared-rate-limits.js';
import { RateLimitCounters } from './store/rate-limit-counters.js';
import { OPEN_API_RESPONSE, registerOpenApi } from './api/plugins/openapi.js';
import { DOCUMENT_FORM } from './api/jsonapi/resource-schemas.js';
import { requestLogOptions } from './api/plugins/request-log.js';
import { protocolOptions } from './api/plugins/protocol-options.js';
import { MAX_PARAM_LENGTH, type HttpLimits } from './api/plugins/http-limits.js';
import { registerUnrouted } from './api/plugins/unrouted.js';
import { registerClosingAnswer } from './api/plugins/closing.js';
import { healthRoutes } from './api/routes/health/health-routes.js';
import { metricsRoutes } from './api/routes/metrics/metrics-routes.js';
import { meRoutes } from './api/routes/me/me-routes.js';
import { workflowRoutes } from './api/routes/workflows/workflow-routes.js';
import { folderRoutes } from './api/routes/folders/folder-routes.js';
import { stepTemplateRoutes } from './api/routes/step-templates/step-template-routes.js';
import { executionRoutes } from './api/routes/executions/execution-routes.js';
import { executionReplayRoutes } from './api/routes/executions/execution-replay-routes.js';
import { executionBulkRoutes } from './api/routes/executions/execution-bulk-routes.js';
import { approvalLinkRoutes, approvalRoutes } from './api/routes/executions/approval-routes.js';
import type { Authenticator } from './services/identity/authenticator.js';
import type { Engine } from './engine/engine.js';
import type { Metrics } from './observability/metrics.js';
import type { Clock } from './lib/clock.js';
import type { WebhookEndpoints } from './webhooks/webhook-endpoints.js';
import { webhookRoutes } from './webhooks/webhook-routes.js';
import { sendWebhookNotFound } from './webhooks/webhook-answers.js';
import { webhookAdminRoutes } from './api/routes/webhooks/webhook-admin-routes.js';
import { storeRoutes } from './api/routes/stores/store-routes.js';
import { storeDumpRoutes } from './api/routes/stores/store-dump-routes.js';
import { storeRowRoutes } from './api/routes/stores/store-row-routes.js';
import { connectionRoutes } from './api/routes/connections/connection-routes.js';
import { knowledgeBaseRoutes } from './api/routes/knowledge-bases/knowledge-base-routes.js';
import { memoryRoutes } from './api/routes/memories/memory-routes.js';
import { workflowDocumentRoutes } from './api/routes/workflows/document-routes.js';
import { folderDocumentRoutes } from './api/routes/folders/folder-document-routes.js';
import { appInstallationRoutes } from './api/routes/app-installations/app-installation-routes.js';
import { platformOpenApiPaths, platformRoutes, type PlatformEndpoint } from './platform/platform-routes.js';

export interface AppDeps extends ApiContext {
  config: Pick<Config, 'apiRateLimit' | 'trustProxy' | 'baseUrl'> & Partial<Pick<Config, 'webhookRateLimit' | 'metricsToken'>>;
  authenticator: Authenticator;
  engine: Engine;
  clock: Clock;
  webhookEndpoints: WebhookEndpoints;
  /** How vectors are searched, for /readyz. */
  vectorMode?: string;
  /** The process logger (lib/logger.ts), or false for none. */
  logger: Logger | false;
  /** Node's request-head and slow-client limits (api/plugins/http-limits.ts); tests shorten them. */
  httpLimits?: Partial<HttpLimits>;
  /** The process metrics, served at /metrics and fed by every answer; none: no /metrics. */
  metrics?: Metrics | null;
  /** The platform endpoints under /webhooks/inbound (platform/platform-endpoints.ts); none: not served. */
  platformEndpoints?: readonly PlatformEndpoint[];
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The Fastify application as a plugin tree; it never listens (cli/serve-command.ts does), so
 * every test drives it through `app.inject()`. Order: external plugins (OpenAPI), app-wide
 * handlers, routes; the /api/v1 scope adds media types, authentication and the rate limit.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...requestLogOptions(deps.logger, deps.metrics ?? null),
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    trustProxy: deps.config.trustProxy.length > 0 ? deps.config.trustProxy : false,
    bodyLimit: 1024 * 1024,
    ...protocolOptions(deps.httpLimits, { '/webhooks': sendWebhookNotFound }),
    routerOptions: {
      maxParamLength: MAX_PARAM_LENGTH,
      ignoreTrailingSlash: true,
      querystringParser: (query) => qs.parse(query, { depth: 10, arrayLimit: 100, parameterLimit: 1000, allowDots: false }),
    },
    // DOCUMENT_FORM: the exact form of a loosely checked schema, for the OpenAPI document only.
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false, keywords: [DOCUMENT_FORM] },
    },
  });

  app.decorateRequest('workspaceId', null);
  app.decorateRequest('bytesBefore', 0);
  // Callback style: on every answer, an async hook's promise is measurable overhead (/me bench).
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.omitRequestId) reply.header('x-request-id', request.id);
    // JSON:API forbids media type parameters on its type; Fastify appends a charset to strings.
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith(`${JSONAPI_MEDIA_TYPE};`)) reply.header('content-type', JSONAPI_MEDIA_TYPE);
    done(null, payload);
  });
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error));
  registerUnrouted(app);
  registerClosingAnswer(app);

  // On PostgreSQL several API processes may serve: they count rate limits in the database.
  const limited = deps.config.apiRateLimit > 0 || (deps.config.webhookRateLimit ?? 0) > 0;
  const sharedRateLimits =
    limited && deps.dialect.name === 'postgres'
      ? new SharedRateLimits(new RateLimitCounters(deps.db), (error) =>
          app.log.warn({ err: error }, 'sweeping expired rate-limit counters failed'),
        )
      : null;
  if (sharedRateLimits) {
    sharedRateLimits.start();
    app.addHook('onClose', async () => sharedRateLimits.stop());
  }

  const platformEndpoints = deps.platformEndpoints ?? [];
  await registerOpenApi(app, deps.config.baseUrl, platformOpenApiPaths(platformEndpoints));
  await app.register(async (root) => healthRoutes(root, deps.db, { vectorSearch: deps.vectorMode ?? null }));
  const metrics = deps.metrics;
  if (metrics) await app.register(async (root) => metricsRoutes(root, { metrics, token: deps.config.metricsToken ?? null }));
  app.get('/api/docs/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await app.register(
    async (hooks) =>
      webhookRoutes(hooks, {
        db: deps.db,
        engine: deps.engine,
        clock: deps.clock,
        endpoints: deps.webhookEndpoints,
        rateLimit: deps.config.webhookRateLimit ?? 0,
        sharedRateLimits,
      }),
    { prefix: '/webhooks' },
  );

  // Signed one-time links of waiting approval steps: no token, the signature is the credential.
  await app.register(async (links) => approvalLinkRoutes(links, deps));

  if (platformEndpoints.length > 0) {
    await app.register(
      async (inbound) =>
        platformRoutes(inbound, { endpoints: platformEndpoints, rateLimit: deps.config.webhookRateLimit ?? 0, sharedRateLimits }),
      { prefix: '/webhooks/inbound' },
    );
  }

  await app.register(
    async (api) => {
      // Authentication's onRequest hook first: docs/api.md's order of refusals (401, 403, then 406).
      registerAuthentication(api, deps.authenticator);
      registerMediaType(api);
      registerQueryNameCheck(api);
      registerBodyMemberCheck(api);
      await registerApiRateLimit(api, deps.config.apiRateLimit, sharedRateLimits);
      api.get(
        '/open_api',
        {
          schema: {
            tags: ['Token'],
            summary: 'This OpenAPI document (the same as /api/docs/openapi.json), with a token',
            response: { 200: OPEN_API_RESPONSE },
          },
          config: { plainJson: true, anyPlan: true },
        },
        // Sent as text: the document is its own schema, so no serializer is built for it.
        async (_request, reply) => reply.type('application/json').send(JSON.stringify(app.swagger())),
      );
      await meRoutes(api, deps);
      await workflowRoutes(api, deps);
      await folderRoutes(api, deps);
      await stepTemplateRoutes(api, deps);
      await executionRoutes(api, deps);
      await executionBulkRoutes(api, deps);
      await approvalRoutes(api, deps);
      await executionReplayRoutes(api, deps);
      await webhookAdminRoutes(api, deps);
      await storeRoutes(api, deps);
      await storeRowRoutes(api, deps);
      await storeDumpRoutes(api, deps);
      await connectionRoutes(api, deps);
      await knowledgeBaseRoutes(api, deps);
      await memoryRoutes(api, deps);
      await workflowDocumentRoutes(api, deps);
      await folderDocumentRoutes(api, deps);
      await appInstallationRoutes(api, deps);
    },
    { prefix: '/api/v1' },
  );

  return app;
}
