import type { Kysely, Transaction } from 'kysely';
import type { SqlDialect } from '../db/dialect/dialect.js';
import type { Database, StoresTable } from '../db/schema.js';
import { directWrites } from '../db/direct-writes.js';

export type StoreRow = StoresTable;
type Db = Kysely<Database> | Transaction<Database>;

/**
 * Live stores of one workspace. A deleted store (`deleted_at` set, rows still being swept) and
 * a store under restore (`restoring_until` set, rows still being imported) are invisible here:
 * they answer exactly like an id that never existed. Only `slugsLike` sees restoring stores,
 * whose slugs are taken. The restore reaches its store through store-restores.ts.
 */
export class StoreRepository {
  constructor(
    private readonly db: Db,
    readonly workspaceId: string,
  ) {}

  withTransaction(trx: Transaction<Database>): StoreRepository {
    return new StoreRepository(trx, this.workspaceId);
  }

  /** The scoped base query for the list route. */
  selectBase() {
    return this.db
      .selectFrom('stores')
      .where('stores.workspace_id', '=', this.workspaceId)
      .where('stores.deleted_at', 'is', null)
      .where('stores.restoring_until', 'is', null);
  }

  find(id: string): Promise<StoreRow | undefined> {
    return this.live().selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * Reads the store and, on PostgreSQL, locks its row until the transaction ends: every writer
   * of the store's rows and every schema or cap change starts here, so they run one at a time
   * per store (SQLite runs one write transaction at a time anyway).
   */
  lock(dialect: SqlDialect, id: string): Promise<StoreRow | undefined> {
    // Inside a SQLite transaction (every row write), a plain prepared statement: see updateLocked.
    const direct = directWrites(this.db);
    if (direct)
      return Promise.resolve(
        direct.get('select * from "stores" where "workspace_id" = ? and "id" = ? and "deleted_at" is null and "restoring_until" is null', [
          this.workspaceId,
          id,
        ]) as StoreRow | undefined,
      );
    const query = this.live().selectAll().where('id', '=', id);
    return (dialect.rowLocks ? query.forUpdate() : query).executeTakeFirst();
  }

  /** Whether a store under restore holds the slug (a create that found it taken says so). */
  async restoringSlug(slug: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('stores')
      .select('id')
      .where('workspace_id', '=', this.workspaceId)
      .where('slug', '=', slug)
      .where('deleted_at', 'is', null)
      .where('restoring_until', 'is not', null)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Live slugs equal to `base` or of the form `base-…`, for deriving a free one. Slugs hold only
   * lower-case letters, digits and dashes, so `base` carries no LIKE wildcard.
   */
  async slugsLike(base: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('stores')
      .select('slug')
      .where('workspace_id', '=', this.workspaceId)
      .where('deleted_at', 'is', null)
      .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', `${base}-%`)]))
      .execute();
    return rows.map((row) => row.slug);
  }

  async insert(row: StoreRow): Promise<void> {
    if (row.workspace_id !== this.workspaceId) throw new Error('store row of another workspace');
    await this.db.insertInto('stores').values(row).execute();
  }

  async update(id: string, changes: Partial<Omit<StoreRow, 'id' | 'workspace_id' | 'deleted_at' | 'restoring_until'>>): Promise<void> {
    await this.db
      .updateTable('stores')
      .set(changes)
      .where('workspace_id', '=', this.workspaceId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .where('restoring_until', 'is', null)
      .execute();
  }

  /**
   * Updates the store that `lock` read in this same transaction (a row write's count and time):
   * by id alone, since the transaction read it live; inside a SQLite transaction through a plain
   * prepared statement (see StoreRowRepository.insert).
   */
  async updateLocked(id: string, changes: Pick<Partial<StoreRow>, 'row_count' | 'last_write_at'>): Promise<void> {
    const direct = directWrites(this.db);
    if (direct) direct.update('stores', changes, id);
    else await this.update(id, changes);
  }

  /** Hides the store at once; the sweeper removes its rows later. False when it was not live. */
  async markDeleted(id: string, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('stores')
      .set({ deleted_at: now, updated_at: now })
      .where('workspace_id', '=', this.workspaceId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .where('restoring_until', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  private live() {
    return this.db
      .selectFrom('stores')
      .where('workspace_id', '=', this.workspaceId)
      .where('deleted_at', 'is', null)
      .where('restoring_until', 'is', null);
  }
}
