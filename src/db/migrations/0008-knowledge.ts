import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * Connections (model provider credentials), knowledge bases with their documents and chunks,
 * and memories with their sessions and messages.
 *
 * Search indexes over chunks differ per dialect:
 * - SQLite: an FTS5 table (`knowledge_chunks_fts`, rowid = chunk `seq`, contentless with
 *   deletes) holds the live chunks' text; vectors live in sqlite-vec `vec0` tables, one per
 *   dimension, created when a base first needs one (see knowledge/vector-index-sqlite.ts).
 * - PostgreSQL: a generated `tsv` column with a GIN index; vectors are the chunks' `real[]`
 *   column (exact scan), mirrored into pgvector tables when the extension exists.
 * Only live chunks are in the SQLite indexes; PostgreSQL queries filter on `live`.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  const text = dialect.textType;
  const postgres = dialect.name === 'postgres';
  const falseValue = postgres ? false : 0;
  const vector = postgres ? sql`real[]` : 'blob';

  await db.schema
    .createTable('connections')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('provider', text, (c) => c.notNull())
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('base_url', text)
    .addColumn('api_key_sealed', text)
    .addColumn('has_api_key', dialect.booleanType, (c) => c.notNull().defaultTo(falseValue))
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('connections_workspace_idx').on('connections').columns(['workspace_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('knowledge_bases')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('description', text)
    .addColumn('embedder', text, (c) => c.notNull())
    .addColumn('embedder_key', text, (c) => c.notNull())
    .addColumn('index_embedder', text)
    .addColumn('index_embedder_key', text)
    .addColumn('index_dimensions', 'integer')
    .addColumn('embedder_status', text, (c) => c.notNull())
    .addColumn('embedder_error', text)
    .addColumn('chunk_size', 'integer', (c) => c.notNull())
    .addColumn('chunk_overlap', 'integer', (c) => c.notNull())
    .addColumn('document_count', 'integer', (c) => c.notNull())
    .addColumn('chunk_count', 'integer', (c) => c.notNull())
    .addColumn('lease_owner', text)
    .addColumn('lease_expires_at', text)
    .addColumn('next_attempt_at', text)
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('knowledge_bases_workspace_idx')
    .on('knowledge_bases')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute();
  // The background loop's look-up: bases whose embedder changed.
  await db.schema
    .createIndex('knowledge_bases_reembed_idx')
    .on('knowledge_bases')
    .column('id')
    .where(sql<boolean>`embedder_status = 'reembedding'`)
    .execute();

  await db.schema
    .createTable('knowledge_documents')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull())
    .addColumn('knowledge_base_id', text, (c) => c.notNull().references('knowledge_bases.id').onDelete('cascade'))
    .addColumn('title', text, (c) => c.notNull())
    .addColumn('external_key', text)
    .addColumn('identity', text, (c) => c.notNull())
    .addColumn('content_type', text, (c) => c.notNull())
    .addColumn('status', text, (c) => c.notNull())
    .addColumn('error', text)
    .addColumn('chunk_count', 'integer', (c) => c.notNull())
    .addColumn('bytes', 'integer', (c) => c.notNull())
    .addColumn('sha256', text, (c) => c.notNull())
    .addColumn('metadata', text, (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('lease_owner', text)
    .addColumn('lease_expires_at', text)
    .addColumn('next_attempt_at', text)
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('knowledge_documents_identity_idx')
    .on('knowledge_documents')
    .columns(['knowledge_base_id', 'identity'])
    .unique()
    .execute();
  await db.schema
    .createIndex('knowledge_documents_base_idx')
    .on('knowledge_documents')
    .columns(['knowledge_base_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('knowledge_documents_pending_idx')
    .on('knowledge_documents')
    .columns(['next_attempt_at', 'id'])
    .where(sql<boolean>`status = 'pending'`)
    .execute();

  await db.schema
    .createTable('knowledge_chunks')
    .addColumn('seq', postgres ? 'bigserial' : 'integer', (c) => c.primaryKey())
    .addColumn('id', text, (c) => c.notNull().unique())
    .addColumn('workspace_id', text, (c) => c.notNull())
    .addColumn('knowledge_base_id', text, (c) => c.notNull().references('knowledge_bases.id').onDelete('cascade'))
    .addColumn('document_id', text, (c) => c.notNull().references('knowledge_documents.id').onDelete('cascade'))
    .addColumn('document_version', 'integer', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('heading_path', text, (c) => c.notNull())
    .addColumn('text', text, (c) => c.notNull())
    .addColumn('tokens', 'integer', (c) => c.notNull())
    .addColumn('live', dialect.booleanType, (c) => c.notNull().defaultTo(falseValue))
    .addColumn('embedding', vector)
    .addColumn('embedding_key', text)
    .addColumn('next_embedding', vector)
    .addColumn('next_embedding_key', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('knowledge_chunks_document_idx')
    .on('knowledge_chunks')
    .columns(['document_id', 'live', 'position'])
    .execute();
  await db.schema.createIndex('knowledge_chunks_base_idx').on('knowledge_chunks').columns(['knowledge_base_id', 'live']).execute();

  if (postgres) {
    // The keyword index: English stemming over the heading path and the text (what the built-in
    // embedder sees too), kept by PostgreSQL itself.
    await sql`alter table knowledge_chunks add column tsv tsvector generated always as (to_tsvector('english', heading_path || ' ' || text)) stored`.execute(
      db,
    );
    await sql`create index knowledge_chunks_tsv_idx on knowledge_chunks using gin (tsv)`.execute(db);
  } else {
    // Contentless (the text lives in knowledge_chunks) with deletes; `kb` (stored: contentless_unindexed) narrows matches to a base.
    await sql`create virtual table knowledge_chunks_fts using fts5(body, kb unindexed, content='', contentless_delete=1, contentless_unindexed=1, tokenize='porter unicode61 remove_diacritics 2')`.execute(
      db,
    );
  }

  await db.schema
    .createTable('memories')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('window', 'integer', (c) => c.notNull())
    .addColumn('compaction', text, (c) => c.notNull())
    .addColumn('recall', text, (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('memories_workspace_idx').on('memories').columns(['workspace_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('memory_sessions')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull())
    .addColumn('memory_id', text, (c) => c.notNull().references('memories.id').onDelete('cascade'))
    .addColumn('session_key', text, (c) => c.notNull())
    .addColumn('message_count', 'integer', (c) => c.notNull())
    .addColumn('window_tokens', 'integer', (c) => c.notNull())
    .addColumn('compaction_count', 'integer', (c) => c.notNull())
    .addColumn('last_compacted_at', text)
    .addColumn('last_compaction', text)
    .addColumn('compaction_due', dialect.booleanType, (c) => c.notNull().defaultTo(falseValue))
    .addColumn('lease_owner', text)
    .addColumn('lease_expires_at', text)
    .addColumn('next_attempt_at', text)
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('compaction_error', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('memory_sessions_key_idx').on('memory_sessions').columns(['memory_id', 'session_key']).unique().execute();
  await db.schema.createIndex('memory_sessions_list_idx').on('memory_sessions').columns(['memory_id', 'created_at', 'id']).execute();
  await db.schema
    .createIndex('memory_sessions_due_idx')
    .on('memory_sessions')
    .column('id')
    .where(sql<boolean>`compaction_due = ${sql.lit(postgres ? true : 1)}`)
    .execute();

  await db.schema
    .createTable('memory_messages')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull())
    .addColumn('memory_id', text, (c) => c.notNull())
    .addColumn('session_id', text, (c) => c.notNull().references('memory_sessions.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('role', text, (c) => c.notNull())
    .addColumn('content', text, (c) => c.notNull())
    .addColumn('tokens', 'integer', (c) => c.notNull())
    .addColumn('in_window', dialect.booleanType, (c) => c.notNull())
    .addColumn('embedding', postgres ? 'bytea' : 'blob')
    .addColumn('created_at', text, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('memory_messages_session_idx').on('memory_messages').columns(['session_id', 'position']).unique().execute();
}
