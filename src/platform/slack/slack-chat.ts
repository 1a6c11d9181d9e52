import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { NonRetriableError, RetryAfterError, StepError } from '../../engine/step-errors.js';
import type { Clock } from '../../lib/clock.js';
import { recordBotThread } from '../../store/bot-thread-repository.js';
import { AppInstallationRepository } from '../../store/app-installation-repository.js';
import type { ChatApi, ChatPostRequest, ChatPostResult } from '../../steps/chat-reply/chat-api.js';
import type { AppService } from '../../services/apps/app-service.js';
import { callSlack, SlackApiError } from './slack-web-api.js';

/** Slack's rate limit without a Retry-After: its tier for chat.postMessage is about one a second per channel. */
const DEFAULT_RATE_LIMIT_WAIT_MS = 1_000;

/**
 * chat_reply's ChatApi over Slack: picks the workspace's installation (by team, or the only one),
 * posts with its bot token, and records the thread the bot now takes part in. Installations are
 * read scoped by the execution's workspace, so a workflow can only ever post as its own
 * workspace's bot. Slack's answers map to the engine's failure vocabulary.
 */
export class SlackChat implements ChatApi {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly apps: AppService,
    private readonly clock: Clock,
    private readonly apiUrl: string,
  ) {}

  async postMessage(request: ChatPostRequest): Promise<ChatPostResult> {
    const installations = await new AppInstallationRepository(this.db, request.workspaceId).listForProvider('slack');
    const installation = request.installationId
      ? installations.find((i) => i.id === request.installationId)
      : request.teamId
        ? installations.find((i) => i.account_id === request.teamId)
        : installations.length === 1
          ? installations[0]
          : undefined;
    if (!installation) {
      const why = request.installationId
        ? `the Slack installation ${request.installationId} is not one of this workspace's`
        : request.teamId
          ? `the Slack team ${request.teamId} is not installed in this workspace`
          : installations.length === 0
            ? 'this workspace has no Slack installation'
            : 'this workspace has several Slack installations: set config.team_id';
      throw new NonRetriableError(`chat_reply cannot post: ${why}`, { code: 'installation_not_found' });
    }
    const token = this.apps.openCredentials(installation).bot_token;
    if (!token)
      throw new NonRetriableError(
        `chat_reply cannot post: the installation of team ${installation.account_id} has no bot token (install it again)`,
        { code: 'installation_not_found' },
      );
    let answer: Record<string, unknown>;
    try {
      answer = await callSlack(this.apiUrl, 'chat.postMessage', {
        token,
        json: { channel: request.channel, text: request.text, ...(request.threadTs ? { thread_ts: request.threadTs } : {}) },
        signal: request.signal,
      });
    } catch (error) {
      throw stepErrorOf(error);
    }
    const ts = typeof answer.ts === 'string' ? answer.ts : null;
    const channel = typeof answer.channel === 'string' ? answer.channel : request.channel;
    if (!ts) throw new NonRetriableError('Slack chat.postMessage answered ok without a ts', { code: 'provider_error' });
    await recordBotThread(this.db, {
      installation_id: installation.id,
      channel,
      thread_ts: request.threadTs ?? ts,
      created_at: this.clock.now(),
    });
    return { channel, ts, thread_ts: request.threadTs, team_id: installation.account_id };
  }
}

function stepErrorOf(error: unknown): Error {
  if (!(error instanceof SlackApiError)) return error as Error;
  const details = { provider: 'slack', slack_error: error.error, http_status: error.httpStatus };
  if (error.error === 'ratelimited' || error.httpStatus === 429)
    return new RetryAfterError(error.message, error.retryAfterMs ?? DEFAULT_RATE_LIMIT_WAIT_MS, { code: 'rate_limited', details });
  if (error.transient)
    return new StepError(error.message, { code: 'provider_unavailable', retryable: true, retryAfterMs: error.retryAfterMs, details });
  return new NonRetriableError(error.message, { code: 'provider_error', details });
}
