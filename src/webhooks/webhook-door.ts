import type { FastifyRequest } from 'fastify';
import type { DoorRefusal } from './delivery-outcome.js';
import type { ResolvedEndpoint } from './webhook-endpoints.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The endpoint the door let this delivery in on (webhook-routes.ts). */
    webhookEndpoint?: ResolvedEndpoint;
  }
}

/**
 * Whether an endpoint lets a delivery in: not unknown or inactive (404), not declared too large
 * (413, before the body is read). Let in, the endpoint is recorded on the request, its workspace
 * too (the request's log line names it). The route's door and every decision made again on an
 * endpoint that changed (deliver-webhook.ts) ask this one function, so they cannot drift apart.
 */
export function letIn(
  endpoint: ResolvedEndpoint | null,
  request: FastifyRequest,
): { kind: 'in'; endpoint: ResolvedEndpoint } | DoorRefusal {
  // Inactive and not capturing: nothing can happen here, whoever asks.
  if (!endpoint || (endpoint.snapshotId === null && !endpoint.capturing)) return { kind: 'not_found' };
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > endpoint.maxBodyBytes) return { kind: 'too_large', limit: endpoint.maxBodyBytes };
  request.webhookEndpoint = endpoint;
  request.workspaceId = endpoint.workspaceId;
  return { kind: 'in', endpoint };
}
