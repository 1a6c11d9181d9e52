import type { Kysely } from 'kysely';
import type { DataStamp } from '../db/data-stamp.js';
import type { AppProvider, Database } from '../db/schema.js';
import { FreshCache } from '../lib/fresh-cache.js';
import { openSecret } from '../lib/secret-box.js';
import { findInstallationByAccount, listAllInstallations, type AppInstallationRow } from '../store/app-installation-repository.js';
import { findProviderApp } from '../store/provider-app-repository.js';

/** A provider's app as the endpoints need it: settings and opened secrets. */
export interface ResolvedApp {
  settings: Readonly<Record<string, string>>;
  secrets: Readonly<Record<string, string>>;
}

/** An installation as the endpoints and steps need it: its workspace, bot identity, opened credentials. */
export interface ResolvedInstallation {
  id: string;
  workspaceId: string;
  provider: AppProvider;
  accountId: string;
  botUserId: string | null;
  botId: string | null;
  credentials: Readonly<Record<string, string>>;
}

/**
 * Looks up provider apps and installations for deliveries, with secrets opened. Answers are
 * cached while the tables are unchanged (db/data-stamp.ts; PostgreSQL announces writes to both
 * tables from migration 0011), so an uninstall or a rotated secret applies to the very next
 * delivery, whichever process took it; the cache saves a query and an AES-GCM open per delivery.
 * A secret sealed under another key opens as absent: verification then fails closed.
 */
export class PlatformDirectory {
  private readonly apps = new FreshCache<ResolvedApp | null>(16);
  private readonly installationCache = new FreshCache<ResolvedInstallation | null>(10_000);
  private readonly allOf = new FreshCache<readonly ResolvedInstallation[]>(16);

  constructor(
    private readonly db: Kysely<Database>,
    private readonly secretKey: string,
    private readonly stamp: DataStamp | null,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  async app(provider: AppProvider): Promise<ResolvedApp | null> {
    const stamp = await this.stampOf('provider_apps');
    if (stamp !== null) {
      const cached = this.apps.get(provider, stamp);
      if (cached !== undefined) return cached;
    }
    const row = await findProviderApp(this.db, provider);
    const resolved = row
      ? {
          settings: Object.freeze(JSON.parse(row.settings) as Record<string, string>),
          secrets: this.open(row.secrets_sealed, `the ${provider} app's secrets`),
        }
      : null;
    if (stamp !== null) this.apps.set(provider, stamp, resolved);
    return resolved;
  }

  async installation(provider: AppProvider, accountId: string): Promise<ResolvedInstallation | null> {
    const stamp = await this.stampOf('app_installations');
    const key = `${provider}\0${accountId}`;
    if (stamp !== null) {
      const cached = this.installationCache.get(key, stamp);
      if (cached !== undefined) return cached;
    }
    const row = await findInstallationByAccount(this.db, provider, accountId);
    const resolved: ResolvedInstallation | null = row ? this.resolve(row) : null;
    if (stamp !== null) this.installationCache.set(key, stamp, resolved);
    return resolved;
  }

  /**
   * Every installation of a provider (Postmark authenticates a delivery by the Basic credentials
   * of an installation before its body is read, so the credentials are matched against all).
   */
  async installations(provider: AppProvider): Promise<readonly ResolvedInstallation[]> {
    const stamp = await this.stampOf('app_installations');
    const key = `${provider}\0*`;
    if (stamp !== null) {
      const cached = this.allOf.get(key, stamp);
      if (cached !== undefined) return cached;
    }
    const rows = await listAllInstallations(this.db, provider);
    const resolved = Object.freeze(rows.map((row) => this.resolve(row)));
    if (stamp !== null) this.allOf.set(key, stamp, resolved);
    return resolved;
  }

  private resolve(row: AppInstallationRow): ResolvedInstallation {
    return {
      id: row.id,
      workspaceId: row.workspace_id,
      provider: row.provider,
      accountId: row.account_id,
      botUserId: row.bot_user_id,
      botId: row.bot_id,
      credentials: this.open(row.credentials_sealed, `the credentials of installation ${row.id}`),
    };
  }

  private async stampOf(table: string): Promise<string | null> {
    const stamp = this.stamp?.([table]) ?? null;
    return typeof stamp === 'object' && stamp !== null ? await stamp : stamp;
  }

  private open(sealed: string | null, what: string): Readonly<Record<string, string>> {
    if (sealed === null) return Object.freeze({});
    try {
      return Object.freeze(JSON.parse(openSecret(this.secretKey, sealed)) as Record<string, string>);
    } catch (error) {
      this.onError(new Error(`${what} cannot be opened with this secret key: ${(error as Error).message}`));
      return Object.freeze({});
    }
  }
}
