import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../db/dialect/dialect.js';
import type { Database, StepTemplatesTable } from '../db/schema.js';
import type { StepDefinition } from '../steps/define-step.js';

export function stepTemplateRow(definition: StepDefinition, dialect: SqlDialect): StepTemplatesTable {
  return {
    id: definition.slug,
    slug: definition.slug,
    name: definition.name,
    category: JSON.stringify(definition.categories),
    icon: definition.icon,
    icon_color: definition.iconColor,
    canvas_schema: JSON.stringify(definition.configSchema),
    canvas_visible: dialect.bool(definition.canvasVisible),
    default_config: JSON.stringify(definition.defaultConfig),
    description: definition.description,
    docs: definition.docs,
    output_schema: definition.outputSchema === null ? null : JSON.stringify(definition.outputSchema),
    ports: JSON.stringify(definition.ports),
    sort_order: definition.sortOrder,
  };
}

/** Mirrors the catalog in code into the table, replacing whatever an older release left. */
/** The advisory lock key of the catalog's mirror (see cluster-store.ts for the claims' own). */
const CATALOG_LOCK = 0x5357_0002;

export async function syncStepTemplates(db: Kysely<Database>, dialect: SqlDialect, definitions: readonly StepDefinition[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Processes starting together on PostgreSQL take turns: two interleaved delete-and-insert
    // transactions would collide on the primary key (SQLite has one writer anyway).
    if (dialect.name === 'postgres') await sql`select pg_advisory_xact_lock(${CATALOG_LOCK})`.execute(trx);
    await trx.deleteFrom('step_templates').execute();
    if (definitions.length > 0)
      await trx
        .insertInto('step_templates')
        .values(definitions.map((d) => stepTemplateRow(d, dialect)))
        .execute();
  });
}

export function selectStepTemplates(db: Kysely<Database>) {
  return db.selectFrom('step_templates');
}
