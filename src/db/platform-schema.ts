/** Tables of platform triggers (migration 0011); registered in schema.ts's Database. */
export const APP_PROVIDERS = ['slack', 'twilio', 'mailgun', 'postmark'] as const;
export type AppProvider = (typeof APP_PROVIDERS)[number];

/** The operator's app of one provider (migration 0011). */
export interface ProviderAppsTable {
  provider: AppProvider;
  /** JSON text of the non-secret settings (a Slack client id, …). */
  settings: string;
  /** The secrets as one JSON object, sealed with the secret key (lib/secret-box.ts); never returned. */
  secrets_sealed: string | null;
  created_at: string;
  updated_at: string;
}

/** One provider account linked to one workspace; `account_id` is unique per provider. */
export interface AppInstallationsTable {
  id: string;
  workspace_id: string;
  provider: AppProvider;
  /** Slack team id, Twilio AccountSid, an email domain or address. */
  account_id: string;
  /** Slack: the bot's user id and bot id (the loop guard drops both); null where unknown. */
  bot_user_id: string | null;
  bot_id: string | null;
  /** Write-only credentials (bot token, auth token, Basic credentials) as sealed JSON. */
  credentials_sealed: string | null;
  created_at: string;
  updated_at: string;
}

/** A provider delivery's dedupe key, committed with the executions it started. */
export interface PlatformEventsTable {
  provider: AppProvider;
  dedupe_key: string;
  workspace_id: string | null;
  execution_count: number;
  created_at: string;
}

/** A thread an installation's bot posted in (its root ts). */
export interface BotThreadsTable {
  installation_id: string;
  channel: string;
  thread_ts: string;
  created_at: string;
}
