import type { Kysely } from 'kysely';
import { APP_PROVIDERS, type AppProvider, type Database } from '../../db/schema.js';
import type { SqlDialect } from '../../db/dialect/dialect.js';
import { AppError, notFound } from '../../errors/app-error.js';
import type { Clock } from '../../lib/clock.js';
import { isUuid, newId } from '../../lib/ids.js';
import { openSecret, sealSecret } from '../../lib/secret-box.js';
import {
  AppInstallationRepository,
  deleteInstallationById,
  findInstallationByAccount,
  insertInstallation,
  listAllInstallations,
  updateInstallation,
  type AppInstallationRow,
} from '../../store/app-installation-repository.js';
import { findProviderApp, listProviderApps, upsertProviderApp } from '../../store/provider-app-repository.js';
import { findWorkspaceBySlug } from '../../store/workspace-repository.js';
import type { Actor } from '../workflows/workflow-service.js';
import { PROVIDER_SPECS } from './provider-specs.js';

/** An app as `app list` shows it: settings, and only the NAMES of the secrets that are set. */
export interface AppSummary {
  provider: AppProvider;
  settings: Record<string, string>;
  secrets_set: string[];
  created_at: string;
  updated_at: string;
}

/** A provider's app with its secrets opened, for the platform endpoints and the OAuth flow. */
export interface OpenedApp {
  provider: AppProvider;
  settings: Record<string, string>;
  secrets: Record<string, string>;
}

export interface InstallInput {
  provider: string;
  /** The workspace by slug (CLI) or id (OAuth flow). */
  workspace: { slug: string } | { id: string };
  accountId: string;
  botUserId?: string | null;
  botId?: string | null;
  credentials?: Record<string, string>;
  /**
   * An OAuth install stores what Slack told it even when `auth.test` named no bot id: the
   * installation then drops every event until both ids are known (DESIGN.md), rather than the
   * install failing after the user approved it. The CLI always requires both.
   */
  botIdentityMayBeUnknown?: boolean;
}

export function isAppProvider(value: unknown): value is AppProvider {
  return typeof value === 'string' && (APP_PROVIDERS as readonly string[]).includes(value);
}

function providerOf(value: string): AppProvider {
  if (!isAppProvider(value)) throw new AppError('bad_request', `provider must be one of ${APP_PROVIDERS.join(', ')}, not "${value}"`);
  return value;
}

/**
 * Provider apps (one per provider, configured by the operator) and installations (one provider
 * account linked to one workspace). Secrets and credentials are sealed with the secret key on
 * write (lib/secret-box.ts) and never returned, logged or exported. A workspace token may list
 * and remove its installations, never create one: claiming an account id would let a workspace
 * read another's messages. Installations come from the operator (CLI) or the OAuth flow only.
 */
export class AppService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: SqlDialect,
    private readonly clock: Clock,
    private readonly secretKey: string,
  ) {}

  /** Sets settings and secrets of a provider's app; values given replace, the others are kept. */
  async setApp(providerName: string, input: { settings?: Record<string, string>; secrets?: Record<string, string> }): Promise<AppSummary> {
    const provider = providerOf(providerName);
    const spec = PROVIDER_SPECS[provider];
    for (const name of Object.keys(input.settings ?? {}))
      if (!spec.settings.includes(name))
        throw new AppError('bad_request', `${name} is not a setting of the ${provider} app (${spec.settings.join(', ') || 'none'})`);
    for (const name of Object.keys(input.secrets ?? {}))
      if (!spec.secrets.includes(name))
        throw new AppError('bad_request', `${name} is not a secret of the ${provider} app (${spec.secrets.join(', ') || 'none'})`);
    for (const [name, value] of Object.entries({ ...input.settings, ...input.secrets })) {
      if (typeof value !== 'string' || value.trim() === '') throw new AppError('bad_request', `${name} must not be empty`);
    }
    const current = await this.openApp(provider);
    const settings = { ...(current?.settings ?? {}), ...input.settings };
    const secrets = { ...(current?.secrets ?? {}), ...trimmed(input.secrets ?? {}) };
    const now = this.clock.now();
    await upsertProviderApp(this.db, {
      provider,
      settings: JSON.stringify(settings),
      secrets_sealed: Object.keys(secrets).length > 0 ? sealSecret(this.secretKey, JSON.stringify(secrets)) : null,
      created_at: now,
      updated_at: now,
    });
    return (await this.listApps()).find((a) => a.provider === provider)!;
  }

  async listApps(): Promise<AppSummary[]> {
    const rows = await listProviderApps(this.db);
    return rows.map((row) => ({
      provider: row.provider,
      settings: JSON.parse(row.settings) as Record<string, string>,
      secrets_set: Object.keys(row.secrets_sealed ? this.openJson(row.secrets_sealed) : {}).sort(),
      created_at: row.created_at,
      updated_at: row.updated_at,
    }));
  }

  /** The app with its secrets opened; null when the operator has not set it. */
  async openApp(provider: AppProvider): Promise<OpenedApp | null> {
    const row = await findProviderApp(this.db, provider);
    if (!row) return null;
    return {
      provider,
      settings: JSON.parse(row.settings) as Record<string, string>,
      secrets: row.secrets_sealed ? this.openJson(row.secrets_sealed) : {},
    };
  }

  /**
   * Links an account to a workspace. Installing it again in the same workspace replaces the bot
   * identity and credentials; an account another workspace holds is refused (409).
   */
  async install(input: InstallInput): Promise<AppInstallationRow> {
    const provider = providerOf(input.provider);
    const spec = PROVIDER_SPECS[provider];
    const accountId = accountIdOf(provider, input.accountId);
    if (accountId === '' || accountId.length > 320)
      throw new AppError('bad_request', `the account id (${spec.accountIdMeaning}) must be 1 to 320 characters`);
    const workspaceId = await this.workspaceIdOf(input.workspace);
    const credentials = trimmed(input.credentials ?? {});
    for (const name of Object.keys(credentials))
      if (!spec.credentials.includes(name))
        throw new AppError(
          'bad_request',
          `${name} is not a credential of a ${provider} installation (${spec.credentials.join(', ') || 'none'})`,
        );
    for (const name of spec.requiredCredentials)
      if (!credentials[name]) throw new AppError('bad_request', `a ${provider} installation needs ${name}`);
    const botUserId = input.botUserId?.trim() || null;
    const botId = input.botId?.trim() || null;
    if (spec.botIdentity && !input.botIdentityMayBeUnknown && (!botUserId || !botId))
      throw new AppError(
        'bad_request',
        `a ${provider} installation needs the bot user id and the bot id (the loop guard drops the bot's own events)`,
      );
    const sealed = Object.keys(credentials).length > 0 ? sealSecret(this.secretKey, JSON.stringify(credentials)) : null;
    const now = this.clock.now();

    const existing = await findInstallationByAccount(this.db, provider, accountId);
    if (existing)
      return this.reinstall(existing, workspaceId, { bot_user_id: botUserId, bot_id: botId, credentials_sealed: sealed, updated_at: now });
    const row: AppInstallationRow = {
      id: newId(),
      workspace_id: workspaceId,
      provider,
      account_id: accountId,
      bot_user_id: botUserId,
      bot_id: botId,
      credentials_sealed: sealed,
      created_at: now,
      updated_at: now,
    };
    try {
      await insertInstallation(this.db, row);
      return row;
    } catch (error) {
      if (!this.dialect.isUniqueViolation(error)) throw error;
      // A concurrent install of the same account won: the same rules as above apply.
      const winner = await findInstallationByAccount(this.db, provider, accountId);
      if (!winner) throw error;
      return this.reinstall(winner, workspaceId, { bot_user_id: botUserId, bot_id: botId, credentials_sealed: sealed, updated_at: now });
    }
  }

  private async reinstall(
    existing: AppInstallationRow,
    workspaceId: string,
    changes: Pick<AppInstallationRow, 'bot_user_id' | 'bot_id' | 'credentials_sealed' | 'updated_at'>,
  ): Promise<AppInstallationRow> {
    if (existing.workspace_id !== workspaceId) {
      throw new AppError(
        'conflict',
        `the ${existing.provider} account ${existing.account_id} is installed in another workspace; uninstall it there first (an account belongs to at most one workspace)`,
      );
    }
    await updateInstallation(this.db, existing.id, changes);
    return { ...existing, ...changes };
  }

  /** Operator removal, by installation id or by provider and account id. */
  async uninstall(target: { id: string } | { provider: string; accountId: string }): Promise<AppInstallationRow> {
    const row =
      'id' in target
        ? isUuid(target.id)
          ? await this.db.selectFrom('app_installations').selectAll().where('id', '=', target.id).executeTakeFirst()
          : undefined
        : await findInstallationByAccount(this.db, providerOf(target.provider), accountIdOf(providerOf(target.provider), target.accountId));
    if (!row) throw notFound('installation');
    await deleteInstallationById(this.db, row.id);
    return row;
  }

  /** Operator view, every workspace. */
  listAllInstallations(provider?: string): Promise<AppInstallationRow[]> {
    return listAllInstallations(this.db, provider === undefined ? undefined : providerOf(provider));
  }

  async getInstallation(actor: Pick<Actor, 'workspaceId'>, id: string): Promise<AppInstallationRow> {
    const row = isUuid(id) ? await new AppInstallationRepository(this.db, actor.workspaceId).find(id) : undefined;
    if (!row) throw notFound('installation');
    return row;
  }

  /** A workspace removes its installation; events of that account are dropped from then on. */
  async removeInstallation(actor: Pick<Actor, 'workspaceId'>, id: string): Promise<void> {
    const row = await this.getInstallation(actor, id);
    await new AppInstallationRepository(this.db, actor.workspaceId).delete(row.id);
  }

  /** An installation's credentials opened; {} when none are stored or they do not open. */
  openCredentials(row: Pick<AppInstallationRow, 'credentials_sealed'>): Record<string, string> {
    return row.credentials_sealed ? this.openJson(row.credentials_sealed) : {};
  }

  private openJson(sealed: string): Record<string, string> {
    try {
      return JSON.parse(openSecret(this.secretKey, sealed)) as Record<string, string>;
    } catch {
      // Sealed under another SWITCHYARD_SECRET_KEY: treated as unset, so verification fails closed.
      return {};
    }
  }

  private async workspaceIdOf(workspace: InstallInput['workspace']): Promise<string> {
    if ('id' in workspace) return workspace.id;
    const row = await findWorkspaceBySlug(this.db, workspace.slug);
    if (!row) throw new AppError('not_found', `workspace "${workspace.slug}" not found`);
    return row.id;
  }
}

/** Email recipients are matched lower-case (addresses and domains are case-insensitive in practice). */
function accountIdOf(provider: AppProvider, accountId: string): string {
  return provider === 'mailgun' || provider === 'postmark' ? accountId.trim().toLowerCase() : accountId.trim();
}

function trimmed(values: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) if (typeof value === 'string' && value.trim() !== '') out[name] = value.trim();
  return out;
}
