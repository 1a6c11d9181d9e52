import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * The step catalog is declared in code (src/steps) and mirrored into this table at every start,
 * so `GET /step-templates` answers the same filter, sort and fieldset language as every other
 * list, through the same SQL path on both dialects.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  const text = dialect.textType;
  await db.schema
    .createTable('step_templates')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('slug', text, (c) => c.notNull().unique())
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('category', text, (c) => c.notNull())
    .addColumn('icon', text, (c) => c.notNull())
    .addColumn('icon_color', text, (c) => c.notNull())
    .addColumn('canvas_schema', text)
    .addColumn('canvas_visible', dialect.booleanType)
    .addColumn('default_config', text)
    .addColumn('description', text)
    .addColumn('docs', text)
    .addColumn('output_schema', text)
    .addColumn('ports', text)
    .addColumn('sort_order', 'integer')
    .execute();
}
