import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors/app-error.js';
import type { Clock } from '../../lib/clock.js';
import { callSlack, SlackApiError } from '../../platform/slack/slack-web-api.js';
import type { AppInstallationRow } from '../../store/app-installation-repository.js';
import type { AppService } from './app-service.js';

/** Bot scopes the app asks for: read the messages and mentions that trigger, post the replies. */
export const SLACK_BOT_SCOPES = [
  'app_mentions:read',
  'channels:history',
  'groups:history',
  'im:history',
  'mpim:history',
  'chat:write',
] as const;
/** How long an install link stays good: enough to click through Slack's consent screen. */
export const STATE_TTL_MS = 10 * 60 * 1000;
export const SLACK_OAUTH_CALLBACK_PATH = '/webhooks/inbound/slack/oauth';

/**
 * Slack's OAuth v2 install, started by a workspace's build token (`POST
 * /api/v1/app-installations/slack/authorize` answers the authorize URL) and finished at our
 * callback. The `state` ties the callback to that workspace: an HMAC (key derived from the secret
 * key) over the workspace id, an expiry and a nonce, so no one can forge a state that installs a
 * team into a workspace they hold no token for. The code is exchanged with `oauth.v2.access`
 * (client credentials as Basic auth), the bot id read with `auth.test`, and the installation
 * stored like the CLI's (an account another workspace holds is refused).
 */
export class SlackOAuth {
  private readonly stateKey: Buffer;

  constructor(
    private readonly apps: AppService,
    private readonly clock: Clock,
    secretKey: string,
    private readonly options: { baseUrl: string; slackApiUrl: string },
  ) {
    this.stateKey = createHmac('sha256', secretKey).update('switchyard slack-oauth state v1').digest();
  }

  get redirectUri(): string {
    return `${this.options.baseUrl}${SLACK_OAUTH_CALLBACK_PATH}`;
  }

  async authorizeUrl(workspaceId: string): Promise<string> {
    const app = await this.apps.openApp('slack');
    const clientId = app?.settings.client_id;
    if (!clientId || !app?.secrets.client_secret)
      throw new AppError(
        'invalid_state',
        "the operator has not set the Slack app's client id and client secret (switchyard app set slack --client-id … --client-secret …)",
      );
    const url = new URL('/oauth/v2/authorize', new URL(this.options.slackApiUrl).origin);
    url.searchParams.set('client_id', clientId);
    url.searchParams.set('scope', SLACK_BOT_SCOPES.join(','));
    url.searchParams.set('redirect_uri', this.redirectUri);
    url.searchParams.set('state', this.signState(workspaceId));
    return url.toString();
  }

  signState(workspaceId: string): string {
    const body = Buffer.from(
      JSON.stringify({ w: workspaceId, e: this.clock.nowMs() + STATE_TTL_MS, n: randomBytes(12).toString('base64url') }),
    ).toString('base64url');
    return `${body}.${this.mac(body).toString('base64url')}`;
  }

  /** The workspace a state was issued to; throws for a forged, altered or expired one. */
  verifyState(state: string): string {
    const [body, mac] = state.split('.');
    if (!body || !mac) throw new AppError('bad_request', 'the install link is not valid; start the install again', { parameter: 'state' });
    const presented = Buffer.from(mac, 'base64url');
    const expected = this.mac(body);
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected))
      throw new AppError('bad_request', 'the install link is not valid; start the install again', { parameter: 'state' });
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { w: string; e: number };
    if (typeof claims.e !== 'number' || claims.e < this.clock.nowMs())
      throw new AppError('bad_request', 'the install link has expired; start the install again', { parameter: 'state' });
    return claims.w;
  }

  /** The callback: verifies the state, exchanges the code, and stores the installation. */
  async complete(query: { code?: string | null; state?: string | null; error?: string | null }): Promise<AppInstallationRow> {
    if (query.error) throw new AppError('bad_request', `Slack did not authorize the install: ${query.error}`, { parameter: 'error' });
    if (!query.state) throw new AppError('bad_request', 'the callback carries no state', { parameter: 'state' });
    const workspaceId = this.verifyState(query.state);
    if (!query.code) throw new AppError('bad_request', 'the callback carries no code', { parameter: 'code' });
    const app = await this.apps.openApp('slack');
    const clientId = app?.settings.client_id;
    const clientSecret = app?.secrets.client_secret;
    if (!clientId || !clientSecret)
      throw new AppError('invalid_state', "the operator has not set the Slack app's client id and client secret");
    try {
      const access = await callSlack(this.options.slackApiUrl, 'oauth.v2.access', {
        form: { code: query.code, redirect_uri: this.redirectUri },
        basic: { user: clientId, password: clientSecret },
      });
      const token = typeof access.access_token === 'string' ? access.access_token : null;
      const team = typeof access.team === 'object' && access.team !== null ? (access.team as Record<string, unknown>) : {};
      if (!token || typeof team.id !== 'string')
        throw new AppError('provider_error', "Slack's oauth.v2.access answer has no bot token or team id");
      const identity = await callSlack(this.options.slackApiUrl, 'auth.test', { token });
      const botUserId =
        typeof access.bot_user_id === 'string' ? access.bot_user_id : typeof identity.user_id === 'string' ? identity.user_id : null;
      const botId = typeof identity.bot_id === 'string' ? identity.bot_id : null;
      return await this.apps.install({
        provider: 'slack',
        workspace: { id: workspaceId },
        accountId: team.id,
        botUserId,
        botId,
        credentials: { bot_token: token },
        botIdentityMayBeUnknown: true,
      });
    } catch (error) {
      if (error instanceof SlackApiError) throw new AppError('provider_error', `Slack refused the install: ${error.error}`);
      throw error;
    }
  }

  private mac(body: string): Buffer {
    return createHmac('sha256', this.stateKey).update(body).digest();
  }
}
