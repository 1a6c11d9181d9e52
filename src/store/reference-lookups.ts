import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The look-ups exports and imports make to name references portably (store slugs, workflow
 * export keys) and to bind them again, all inside one workspace. Deleted stores and stores under
 * restore are not found.
 */
export class ReferenceLookups {
  constructor(
    private readonly db: Db,
    readonly workspaceId: string,
  ) {}

  async workflowsByIds(ids: readonly string[]): Promise<Map<string, { export_key: string; name: string }>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('workflows')
      .select(['id', 'export_key', 'name'])
      .where('workspace_id', '=', this.workspaceId)
      .where('id', 'in', [...ids])
      .execute();
    return new Map(rows.map((row) => [row.id, { export_key: row.export_key, name: row.name }]));
  }

  async workflowByExportKey(exportKey: string): Promise<{ id: string; name: string } | undefined> {
    return this.db
      .selectFrom('workflows')
      .select(['id', 'name'])
      .where('workspace_id', '=', this.workspaceId)
      .where('export_key', '=', exportKey)
      .executeTakeFirst();
  }

  async workflowExists(id: string): Promise<boolean> {
    return (
      (await this.db
        .selectFrom('workflows')
        .select('id')
        .where('workspace_id', '=', this.workspaceId)
        .where('id', '=', id)
        .executeTakeFirst()) !== undefined
    );
  }

  async storesByIds(ids: readonly string[]): Promise<Map<string, { slug: string; name: string }>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('stores')
      .select(['id', 'slug', 'name'])
      .where('workspace_id', '=', this.workspaceId)
      .where('deleted_at', 'is', null)
      .where('restoring_until', 'is', null)
      .where('id', 'in', [...ids])
      .execute();
    return new Map(rows.map((row) => [row.id, { slug: row.slug, name: row.name }]));
  }

  async storeBySlug(slug: string): Promise<{ id: string } | undefined> {
    return this.db
      .selectFrom('stores')
      .select('id')
      .where('workspace_id', '=', this.workspaceId)
      .where('deleted_at', 'is', null)
      .where('restoring_until', 'is', null)
      .where('slug', '=', slug)
      .executeTakeFirst();
  }
}
