import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * The exact vector search of PostgreSQL without pgvector (knowledge/search-indexes-exact.ts).
 *
 * - `knowledge_bases.index_version`: raised in the transaction of every change to a base's
 *   searchable vectors (a swap, a delete, a re-embedding), so a process that keeps a base's
 *   vectors in memory knows from the base row it reads anyway whether its copy is current.
 *   Both dialects carry it; only the exact index raises it.
 * - `knowledge_exact_vectors` (PostgreSQL): each live chunk's vector as 4-byte big-endian floats
 *   (what `float4send` writes), loaded in one query: the `real[]` column costs ~10 times as much
 *   to send and parse. Not a foreign key: a swap deletes and re-inserts the chunk rows it turns
 *   live. `version` is the base's `index_version` that wrote the row, so a process holding the
 *   base at version v fetches only rows written after it. Filled lazily: a base whose rows here disagree with its chunk count is copied again
 *   from its chunks when it is first searched, so no backfill is needed here.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema
    .alterTable('knowledge_bases')
    .addColumn('index_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  if (dialect.name !== 'postgres') return;
  await sql`create table knowledge_exact_vectors (seq bigint primary key, knowledge_base_id text not null, version integer not null, embedding bytea not null)`.execute(
    db,
  );
  await sql`create index knowledge_exact_vectors_base_idx on knowledge_exact_vectors (knowledge_base_id, seq)`.execute(db);
}
