import { NonRetriableError } from '../../engine/step-errors.js';
import { isPlainObject } from '../../lib/json.js';
import type { StepRuntime } from '../step-runtime.js';
import { MAX_CHAT_TEXT } from './index.js';

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** chat_reply: posts through the ChatApi the engine was given, as the workspace's installed bot. */
export const runChatReply: StepRuntime = async (context) => {
  const chat = context.settings.chat;
  if (!chat) throw new NonRetriableError('chat_reply is not available in this engine (no chat API configured)', { code: 'not_available' });
  const channel = text(context.config.channel);
  const message =
    typeof context.config.text === 'string'
      ? context.config.text
      : context.config.text === undefined || context.config.text === null
        ? null
        : JSON.stringify(context.config.text);
  if (!channel) throw new NonRetriableError('chat_reply needs a channel (config.channel resolved to nothing)', { code: 'invalid_config' });
  if (!message) throw new NonRetriableError('chat_reply needs a text (config.text resolved to nothing)', { code: 'invalid_config' });
  if (message.length > MAX_CHAT_TEXT)
    throw new NonRetriableError(`chat_reply text is ${message.length} characters; Slack takes at most ${MAX_CHAT_TEXT}`, {
      code: 'invalid_config',
    });
  const trigger = isPlainObject(context.trigger) && isPlainObject(context.trigger.payload) ? context.trigger.payload : {};
  const posted = await chat.postMessage({
    workspaceId: context.execution.workspaceId,
    teamId: text(context.config.team_id) ?? text(trigger.team_id),
    // Not in chat_reply's config schema: set by an approval step's notify (engine/run/approval-notify.ts).
    installationId: text(context.config.installation_id),
    channel,
    text: message,
    threadTs: text(context.config.thread_ts),
    signal: context.cancel.signal,
  });
  return { output: posted, metrics: { provider: 'slack', kind: 'chat_reply' } };
};
