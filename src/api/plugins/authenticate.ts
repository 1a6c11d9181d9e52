import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors/app-error.js';
import type { AuthContext, Authenticator } from '../../services/identity/authenticator.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
  }
  interface FastifyContextConfig {
    /** Readable by any valid token whatever the workspace plan (the step catalog). */
    anyPlan?: boolean;
  }
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Authentication runs first in the API scope (onRequest), before a body is read: a missing,
 * unknown, expired or revoked token is 401; a workspace not on Pro is 403 plan_required; a
 * write with a read token is 403 forbidden.
 */
export function registerAuthentication(app: FastifyInstance, authenticator: Authenticator): void {
  app.decorateRequest('auth', null as unknown as AuthContext);
  app.addHook('onRequest', async (request) => {
    const auth = await authenticator.authenticate(request.headers.authorization);
    request.auth = auth;
    request.workspaceId = auth.workspace.id;
    // Every later log line of this request names the workspace and token (never the secret).
    request.log = request.log.child({ workspace_id: auth.workspace.id, token_id: auth.tokenId });
    if (auth.workspace.plan !== 'pro' && request.routeOptions.config?.anyPlan !== true) {
      throw new AppError(
        'plan_required',
        `API access requires the Pro plan; workspace "${auth.workspace.slug}" is on the ${auth.workspace.plan} plan`,
      );
    }
    if (WRITE_METHODS.has(request.method) && !auth.scopes.includes('build')) {
      throw new AppError(
        'forbidden',
        'this token has the read scope, which allows GET only; mint a build-scoped token (switchyard token create --scope build) to make changes',
      );
    }
  });
}
