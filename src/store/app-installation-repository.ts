import type { Kysely, Transaction } from 'kysely';
import type { AppInstallationsTable, AppProvider, Database } from '../db/schema.js';

export type AppInstallationRow = AppInstallationsTable;
type Db = Kysely<Database> | Transaction<Database>;

/** Installations of one workspace: the workspace id is fixed at construction. */
export class AppInstallationRepository {
  constructor(
    private readonly db: Db,
    readonly workspaceId: string,
  ) {}

  selectBase() {
    return this.db.selectFrom('app_installations').where('app_installations.workspace_id', '=', this.workspaceId);
  }

  find(id: string): Promise<AppInstallationRow | undefined> {
    return this.db
      .selectFrom('app_installations')
      .selectAll()
      .where('workspace_id', '=', this.workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** The workspace's installation of a provider account, or of the provider when it has one only. */
  listForProvider(provider: AppProvider): Promise<AppInstallationRow[]> {
    return this.db
      .selectFrom('app_installations')
      .selectAll()
      .where('workspace_id', '=', this.workspaceId)
      .where('provider', '=', provider)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('app_installations')
      .where('workspace_id', '=', this.workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

/**
 * The installation of a provider account, whichever workspace holds it: a delivery names the
 * account, and the row then names its workspace (the unique index makes it at most one).
 */
export function findInstallationByAccount(db: Db, provider: AppProvider, accountId: string): Promise<AppInstallationRow | undefined> {
  return db
    .selectFrom('app_installations')
    .selectAll()
    .where('provider', '=', provider)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** Every installation (operator view: the CLI). */
export function listAllInstallations(db: Db, provider?: AppProvider): Promise<AppInstallationRow[]> {
  let query = db.selectFrom('app_installations').selectAll();
  if (provider) query = query.where('provider', '=', provider);
  return query.orderBy('created_at').orderBy('id').execute();
}

export async function insertInstallation(db: Db, row: AppInstallationRow): Promise<void> {
  await db.insertInto('app_installations').values(row).execute();
}

/** Replaces the bot identity and credentials of an existing installation (a reinstall). */
export async function updateInstallation(
  db: Db,
  id: string,
  changes: Partial<Pick<AppInstallationRow, 'bot_user_id' | 'bot_id' | 'credentials_sealed' | 'updated_at'>>,
): Promise<void> {
  await db.updateTable('app_installations').set(changes).where('id', '=', id).execute();
}

export async function deleteInstallationById(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('app_installations').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
