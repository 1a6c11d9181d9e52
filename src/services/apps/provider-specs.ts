import type { AppProvider } from '../../db/schema.js';

/**
 * What each provider's app and installations hold. `settings` are shown by `app list`;
 * `secrets` (the app's) and `credentials` (an installation's) are sealed and never shown.
 * Names are snake_case; the CLI maps `--signing-secret` to `signing_secret`.
 */
export interface ProviderSpec {
  settings: readonly string[];
  secrets: readonly string[];
  credentials: readonly string[];
  /** Credentials an installation must have (the CLI requires them). */
  requiredCredentials: readonly string[];
  /** Installations carry a bot identity (Slack's bot user id and bot id), required on install. */
  botIdentity: boolean;
  /** What the account id is, for messages. */
  accountIdMeaning: string;
}

export const PROVIDER_SPECS: Readonly<Record<AppProvider, ProviderSpec>> = Object.freeze({
  slack: {
    settings: ['client_id'],
    secrets: ['signing_secret', 'client_secret'],
    credentials: ['bot_token'],
    requiredCredentials: ['bot_token'],
    botIdentity: true,
    accountIdMeaning: 'the Slack team id (T…)',
  },
  twilio: {
    settings: [],
    secrets: [],
    credentials: ['auth_token'],
    requiredCredentials: ['auth_token'],
    botIdentity: false,
    accountIdMeaning: 'the Twilio AccountSid (AC…)',
  },
  mailgun: {
    settings: [],
    secrets: ['signing_key'],
    credentials: [],
    requiredCredentials: [],
    botIdentity: false,
    accountIdMeaning: 'the recipient domain or address',
  },
  postmark: {
    settings: [],
    secrets: [],
    credentials: ['basic_user', 'basic_password'],
    requiredCredentials: ['basic_user', 'basic_password'],
    botIdentity: false,
    accountIdMeaning: 'the recipient domain or address',
  },
});
