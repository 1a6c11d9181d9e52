import type { Kysely } from 'kysely';
import type { SqlDialect } from '../../db/dialect/dialect.js';
import type { Database } from '../../db/schema.js';
import { AppError, notFound } from '../../errors/app-error.js';
import type { Clock } from '../../lib/clock.js';
import { isUuid, newId } from '../../lib/ids.js';
import { checkStoreSchema, compileRowSchema, rememberRowValidator } from '../../store/row-schema.js';
import { StoreRepository, type StoreRow } from '../../store/store-repository.js';
import { abandonRestore } from '../../store/store-restores.js';
import { readString, rejectUnknown, Violations, type AttributeInput } from '../attribute-input.js';
import type { Actor } from '../workflows/workflow-service.js';
import { remainingViolations, scanRows } from './schema-change.js';
import { firstFreeSlug, slugFromName, STORE_SLUG } from './store-slug.js';

/** DESIGN.md: 100,000 rows per store unless set, up to the server's maximum. */
export const DEFAULT_ROW_CAP = 100_000;
const DEFAULT_SCHEMA = { type: 'object' };
const ATTRIBUTES = ['name', 'slug', 'description', 'schema', 'row_cap'] as const;
/**
 * Creates deriving the same slug at once: each loser derives again from the slugs taken by then.
 * Every round has a winner, so with N creates racing the last may need N attempts (6 at once
 * failed the sixth with 5 attempts, once statements got fast enough to keep them in step).
 */
const SLUG_ATTEMPTS = 32;

interface StoreChanges {
  name?: string;
  slug?: string;
  description?: string | null;
  schema?: Record<string, unknown>;
  row_cap?: number;
}

/** The store resource: create, read, change (name, slug, description, schema, cap) and delete. */
export class StoreService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: SqlDialect,
    private readonly clock: Clock,
    private readonly limits: { maxRowCap: number },
    /** Called after a store is deleted, so the sweeper removes its rows soon. */
    private readonly onDeleted: () => void = () => {},
  ) {}

  private stores(actor: Actor): StoreRepository {
    return new StoreRepository(this.db, actor.workspaceId);
  }

  async get(actor: Actor, id: string): Promise<StoreRow> {
    const row = isUuid(id) ? await this.stores(actor).find(id) : undefined;
    if (!row) throw notFound('store');
    return row;
  }

  /**
   * Makes a store. `restoringUntil` makes it for a restore (dump/store-restore.ts): invisible, its
   * slug held, until the restore's last batch clears it.
   */
  async create(actor: Actor, input: AttributeInput, options: { restoringUntil?: string } = {}): Promise<StoreRow> {
    const changes = this.readChanges(input, true);
    const now = this.clock.now();
    const row: StoreRow = {
      id: newId(),
      workspace_id: actor.workspaceId,
      name: changes.name!,
      slug: changes.slug ?? '',
      description: changes.description ?? null,
      schema: JSON.stringify(changes.schema ?? DEFAULT_SCHEMA),
      schema_version: 1,
      row_count: 0,
      row_cap: changes.row_cap ?? Math.min(DEFAULT_ROW_CAP, this.limits.maxRowCap),
      last_write_at: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
      restoring_until: options.restoringUntil ?? null,
    };
    const repo = this.stores(actor);
    for (let attempt = 1; ; attempt++) {
      if (changes.slug === undefined) row.slug = firstFreeSlug(slugFromName(row.name), await repo.slugsLike(slugFromName(row.name)));
      try {
        await repo.insert(row);
        return row;
      } catch (error) {
        if (!this.dialect.isUniqueViolation(error)) throw error;
        if (changes.slug !== undefined) throw slugTaken(row.slug, input.pointer('slug'), await repo.restoringSlug(row.slug));
        if (attempt === SLUG_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * Changes attributes. A new schema is checked against every row first (schema-change.ts); a
   * lower cap against the row count, under the store's lock, as writers count under it too.
   */
  async update(actor: Actor, id: string, input: AttributeInput): Promise<StoreRow> {
    const current = await this.get(actor, id);
    const changes = this.readChanges(input, false);
    const schemaText = changes.schema === undefined ? undefined : JSON.stringify(changes.schema);
    const newSchema = schemaText !== undefined && schemaText !== current.schema;
    const validate = newSchema ? compileRowSchema(changes.schema!) : null;
    const scan = validate ? await scanRows(this.db, (await this.stores(actor).find(id)) ?? current, validate) : null;

    try {
      const updated = await this.db.transaction().execute(async (trx) => {
        const repo = this.stores(actor).withTransaction(trx);
        const store = await repo.lock(this.dialect, id);
        if (!store) throw notFound('store');
        if (changes.row_cap !== undefined && changes.row_cap < store.row_count) {
          throw new AppError('validation_failed', `row_cap cannot be lower than the store's ${store.row_count} rows; delete rows first`, {
            pointer: input.pointer('row_cap'),
          });
        }
        if (validate && scan) {
          const left = await remainingViolations(trx, store, validate, scan);
          if (left.count > 0) {
            const example = left.example ? ` (key "${left.example.key}": ${left.example.detail})` : '';
            throw new AppError(
              'schema_violated_by_rows',
              `${left.count} ${left.count === 1 ? 'row violates' : 'rows violate'} the new schema${example}; change or delete them first`,
              { pointer: input.pointer('schema') },
              {
                meta: { violating_rows: left.count, first_keys: left.firstKeys },
              },
            );
          }
        }
        const updated: StoreRow = {
          ...store,
          ...(changes.name !== undefined ? { name: changes.name } : {}),
          ...(changes.slug !== undefined ? { slug: changes.slug } : {}),
          ...(changes.description !== undefined ? { description: changes.description } : {}),
          ...(changes.row_cap !== undefined ? { row_cap: changes.row_cap } : {}),
          ...(newSchema ? { schema: schemaText!, schema_version: store.schema_version + 1 } : {}),
          updated_at: this.clock.now(),
        };
        const { id: _id, workspace_id: _ws, deleted_at: _deleted, restoring_until: _restoring, ...columns } = updated;
        await repo.update(id, columns);
        return updated;
      });
      // Once committed (a version number is only ever given to one schema), the next write
      // finds its validator compiled.
      if (validate) rememberRowValidator(updated.id, updated.schema_version, validate);
      return updated;
    } catch (error) {
      if (changes.slug !== undefined && this.dialect.isUniqueViolation(error))
        throw slugTaken(changes.slug, input.pointer('slug'), await this.stores(actor).restoringSlug(changes.slug));
      throw error;
    }
  }

  /** The store disappears at once (its slug is free again); the sweeper removes its rows. */
  async remove(actor: Actor, id: string): Promise<void> {
    if (!isUuid(id) || !(await this.stores(actor).markDeleted(id, this.clock.now()))) throw notFound('store');
    this.onDeleted();
  }

  /** A restore that failed gives its store up: deleted, for the sweeper (dump/store-restore.ts). */
  async abandonRestore(id: string): Promise<void> {
    await abandonRestore(this.db, id, this.clock.now());
    this.onDeleted();
  }

  private readChanges(input: AttributeInput, creating: boolean): StoreChanges {
    const violations = new Violations();
    rejectUnknown(input, ATTRIBUTES, violations, (name) => `${name} cannot be set: a store takes ${ATTRIBUTES.join(', ')}`);
    const name = readString(input, 'name', violations, { required: creating, max: 200 });
    if (name === '') violations.add(input.pointer('name'), 'name must not be empty');
    const description = readString(input, 'description', violations, { max: 10_000, nullable: true });
    const slug = input.values.slug;
    if (slug !== undefined && (typeof slug !== 'string' || !STORE_SLUG.test(slug))) {
      violations.add(
        input.pointer('slug'),
        'slug must be 1 to 64 lower-case letters, digits and dashes, starting and ending with a letter or digit',
      );
    }
    const rowCap = input.values.row_cap;
    if (rowCap !== undefined && (!Number.isSafeInteger(rowCap) || (rowCap as number) < 1 || (rowCap as number) > this.limits.maxRowCap)) {
      violations.add(input.pointer('row_cap'), `row_cap must be a whole number from 1 to ${this.limits.maxRowCap} (this server's maximum)`);
    }
    const schema = input.values.schema;
    if (schema !== undefined) {
      for (const issue of checkStoreSchema(schema)) violations.add(`${input.pointer('schema')}${issue.pointer}`, issue.detail);
    }
    violations.throwIfAny();
    return {
      ...(name ? { name } : {}),
      ...(typeof slug === 'string' ? { slug } : {}),
      ...(description !== undefined ? { description } : {}),
      ...(schema !== undefined ? { schema: schema as Record<string, unknown> } : {}),
      ...(rowCap !== undefined ? { row_cap: rowCap as number } : {}),
    };
  }
}

function slugTaken(slug: string, pointer: string, byRestore: boolean): AppError {
  const holder = byRestore ? 'a restore in progress is making a store with' : 'another store of this workspace has';
  return new AppError('slug_taken', `${holder} the slug "${slug}"`, { pointer });
}
