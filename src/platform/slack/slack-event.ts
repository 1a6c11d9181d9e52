import { isPlainObject } from '../../lib/json.js';
import { DEFAULT_APP_EVENT_TYPES } from '../../steps/app-event/index.js';

/**
 * Terminology:
 * - event: Slack's `event` object inside an `event_callback` envelope.
 * - event type: what an `app_event` trigger lists. A message's edit and deletion are their own
 *   types (`message_changed`, `message_deleted`), as is any other message subtype
 *   (`channel_join`, …); new messages (no subtype, or one of NEW_MESSAGE_SUBTYPES) are `message`.
 * - subject: the message the event is about: the event itself, or for an edit the edited
 *   message (`event.message`), for a deletion the deleted one (`event.previous_message`).
 */

/** Subtypes that are still a new message someone (or some bot) posted. */
const NEW_MESSAGE_SUBTYPES = new Set(['bot_message', 'thread_broadcast', 'file_share', 'me_message']);

/** The contract's payload fields of an app event (spec: Events, App events). */
export interface SlackPayload {
  text: string | null;
  user: string | null;
  channel: string | null;
  channel_type: string | null;
  ts: string | null;
  thread_ts: string | null;
  mentioned: boolean;
  bot_thread: boolean;
  event_id: string;
  event_type: string;
  team_id: string;
}

/** What the endpoint reads from an event before it decides anything. */
export interface SlackEventFacts {
  eventType: string;
  /** A new message (or mention): the same message may come as `message` and `app_mention`. */
  isNewMessage: boolean;
  text: string | null;
  user: string | null;
  botId: string | null;
  /** Posted by a bot (a bot id, or the `bot_message` subtype). */
  fromBot: boolean;
  channel: string | null;
  channelType: string | null;
  ts: string | null;
  threadTs: string | null;
}

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

export function readSlackEvent(event: Record<string, unknown>): SlackEventFacts {
  const type = str(event.type) ?? 'unknown';
  const subtype = str(event.subtype);
  let eventType = type;
  if (type === 'message' && subtype !== null && !NEW_MESSAGE_SUBTYPES.has(subtype)) eventType = subtype;
  const subject = subjectOf(event, subtype);
  const botProfile = isPlainObject(subject.bot_profile) ? subject.bot_profile : {};
  const botId = str(subject.bot_id) ?? str(botProfile.id);
  return {
    eventType,
    isNewMessage: (type === 'message' && (subtype === null || NEW_MESSAGE_SUBTYPES.has(subtype))) || type === 'app_mention',
    text: str(subject.text),
    user: str(subject.user),
    botId,
    fromBot: botId !== null || str(subject.subtype) === 'bot_message',
    channel: str(event.channel) ?? (isPlainObject(event.item) ? str(event.item.channel) : null),
    channelType: str(event.channel_type),
    ts: str(subject.ts) ?? str(event.event_ts),
    threadTs: str(subject.thread_ts),
  };
}

function subjectOf(event: Record<string, unknown>, subtype: string | null): Record<string, unknown> {
  if (subtype === 'message_changed' && isPlainObject(event.message)) return event.message;
  if (subtype === 'message_deleted' && isPlainObject(event.previous_message)) return event.previous_message;
  return event;
}

/** Whether the bot was addressed: a mention event, a direct message, or its user id in the text. */
export function isMentioned(facts: SlackEventFacts, botUserId: string): boolean {
  return facts.eventType === 'app_mention' || facts.channelType === 'im' || (facts.text ?? '').includes(`<@${botUserId}>`);
}

/** The installation's own bot, by user id or bot id: its events never start anything. */
export function isOwnBot(facts: SlackEventFacts, bot: { userId: string; botId: string }): boolean {
  return facts.user === bot.userId || facts.botId === bot.botId;
}

/** The config of an `app_event` node, defaults applied. */
export function matchesAppEvent(
  config: Readonly<Record<string, unknown>>,
  facts: SlackEventFacts,
  payload: Pick<SlackPayload, 'mentioned' | 'bot_thread'>,
): boolean {
  const types: readonly unknown[] = Array.isArray(config.event_types) ? (config.event_types as unknown[]) : DEFAULT_APP_EVENT_TYPES;
  if (!types.includes(facts.eventType)) return false;
  const channels = Array.isArray(config.channels) ? (config.channels as unknown[]) : [];
  if (channels.length > 0 && !channels.includes(facts.channel)) return false;
  if (config.only_mentioned === true && !payload.mentioned) return false;
  if (config.bot_threads_only === true && !payload.bot_thread) return false;
  if (facts.fromBot && config.include_bots !== true) return false;
  return true;
}
