import { sql } from 'kysely';
import type { DatabaseHandle } from '../db/dialect/dialect.js';
import { exactIndexes } from './search-indexes-exact.js';
import { sqliteIndexes } from './search-indexes-sqlite.js';
import { VectorReader } from './vector-reader.js';
import {
  and,
  exactNearest,
  keywordQuery,
  metadataConditions,
  vectorTable,
  vectorTableName,
  type Db,
  type MetadataFilter,
  type ScoredSeq,
  type SearchIndexes,
} from './search-sql.js';

/**
 * The search indexes over live chunks, per dialect:
 *
 * | | keyword | vector |
 * | --- | --- | --- |
 * | SQLite | FTS5 `knowledge_chunks_fts`, bm25 | sqlite-vec `vec0` table per dimension, partitioned by base |
 * | PostgreSQL + pgvector | `tsv` column, GIN, ts_rank | `knowledge_vectors_<dim>` with an HNSW index (cosine) |
 * | PostgreSQL without it | `tsv` column, GIN, ts_rank | exact scan in memory (search-indexes-exact.ts) |
 *
 * A metadata filter narrows the candidates first and scores them exactly (an approximate
 * index cannot filter on arbitrary metadata without losing results).
 * Both PostgreSQL paths are tested: CI builds pgvector from the source of Debian's package
 * (.ci/run; test/knowledge-pgvector.test.ts), and the exact scan's tests force it.
 */
export { VECTOR_MODES, METADATA_KEY } from './search-sql.js';
export type { VectorMode, Db, IndexedChunk, ScoredSeq, MetadataFilter, SearchIndexes } from './search-sql.js';

async function tsKeyword(db: Db, baseId: string, terms: string[], k: number, filter: MetadataFilter | null): Promise<ScoredSeq[]> {
  if (terms.length === 0) return [];
  const conditions = metadataConditions('postgres', filter);
  const join = conditions.length > 0 ? sql`join knowledge_documents d on d.id = c.document_id` : sql``;
  const result = await sql<{ seq: string; score: number }>`
    select c.seq, ts_rank(c.tsv, q) as score from knowledge_chunks c ${join}, to_tsquery('english', ${keywordQuery('postgres', terms)}) q
    where c.knowledge_base_id = ${baseId} and c.live and c.tsv @@ q${and(conditions)}
    order by score desc, c.seq limit ${k}`.execute(db);
  return result.rows.map((row) => ({ seq: Number(row.seq), score: Number(row.score) }));
}

function vectorLiteral(vector: Float32Array): string {
  return `[${Array.from(vector).join(',')}]`;
}

/**
 * pgvector: a mirror table per dimension with an HNSW index; the chunks' `real[]` column stays the
 * source. `seq` is no foreign key: a swap deletes and re-inserts the chunk rows it turns live
 * (after `add`), and a cascade would take their vectors with them; `remove` deletes them.
 */
function pgvectorIndexes(): SearchIndexes {
  const ensured = new Set<number>();
  const ensure = async (db: Db, dimensions: number) => {
    if (ensured.has(dimensions)) return;
    const dims = sql.raw(String(Math.trunc(dimensions)));
    await sql`create table if not exists ${vectorTable(dimensions)} (seq bigint primary key, knowledge_base_id text not null, embedding vector(${dims}) not null)`.execute(
      db,
    );
    await sql`create index if not exists ${sql.raw(`${vectorTableName(dimensions)}_hnsw`)} on ${vectorTable(dimensions)} using hnsw (embedding vector_cosine_ops)`.execute(
      db,
    );
    ensured.add(dimensions);
  };
  const insertVectors = async (trx: Db, baseId: string, dimensions: number, rows: { seq: number; embedding: Float32Array }[]) => {
    await ensure(trx, dimensions);
    for (const row of rows) {
      await sql`insert into ${vectorTable(dimensions)} (seq, knowledge_base_id, embedding) values (${row.seq}, ${baseId}, ${vectorLiteral(row.embedding)}::vector)`.execute(
        trx,
      );
    }
  };
  const deleteVectors = async (trx: Db, dimensions: number, seqs: number[]) => {
    await ensure(trx, dimensions);
    await sql`delete from ${vectorTable(dimensions)} where seq = any(${seqs}::bigint[])`.execute(trx);
  };
  return {
    vectorMode: 'pgvector',
    dropBase: async () => {},
    async add(trx, baseId, dimensions, chunks) {
      await insertVectors(trx, baseId, dimensions, chunks);
    },
    async remove(trx, _baseId, dimensions, seqs) {
      if (dimensions !== null && seqs.length > 0) await deleteVectors(trx, dimensions, seqs);
    },
    async replaceVectors(trx, baseId, oldDimensions, seqs, dimensions, vectors) {
      if (oldDimensions !== null) await deleteVectors(trx, oldDimensions, seqs);
      await insertVectors(
        trx,
        baseId,
        dimensions,
        seqs.map((seq, i) => ({ seq, embedding: vectors[i]! })),
      );
    },
    async nearest(db, baseId, dimensions, query, k, filter) {
      if (filter && Object.keys(filter).length > 0) return exactNearest(db, 'postgres', baseId, query, k, filter);
      await ensure(db, dimensions);
      const result = await sql<{ seq: string; distance: number }>`
        select seq, embedding <=> ${vectorLiteral(query)}::vector as distance from ${vectorTable(dimensions)}
        where knowledge_base_id = ${baseId} order by embedding <=> ${vectorLiteral(query)}::vector limit ${k}`.execute(db);
      return result.rows.map((row) => ({ seq: Number(row.seq), score: 1 - Number(row.distance) }));
    },
    keyword: tsKeyword,
    forget: () => ensured.clear(),
  };
}

/**
 * Chooses the vector index at start: sqlite-vec on SQLite; on PostgreSQL pgvector when the
 * extension is available (created here when the role may), else the exact scan. `pgvector:
 * false` takes the exact scan even where pgvector is available (its tests).
 */
export async function openSearchIndexes(
  handle: Pick<DatabaseHandle, 'db' | 'dialect'> & Partial<Pick<DatabaseHandle, 'writes' | 'externalChanges' | 'file'>>,
  options: { ivfMinVectors?: number; keywordBudget?: number; exactCacheBytes?: number; vectorReader?: boolean; pgvector?: boolean } = {},
): Promise<SearchIndexes> {
  if (handle.dialect.name === 'sqlite') {
    // The keyword search remembers term statistics while the FTS table is unchanged: this
    // process's writes to it are counted (TableWrites), other connections' commits seen by
    // data_version. Without both, it remembers nothing.
    const { writes, externalChanges } = handle;
    const ftsVersion =
      writes && externalChanges ? () => `${writes.version(['knowledge_chunks_fts', 'knowledge_bases'])}:${externalChanges()}` : null;
    // Vector scans on a thread of their own (vector-reader.ts), for a database in a file.
    const reader = handle.file && options.vectorReader !== false ? new VectorReader(handle.file) : null;
    return sqliteIndexes({ ...options, ftsVersion, reader });
  }
  const available = await sql`select 1 from pg_available_extensions where name = 'vector'`.execute(handle.db);
  const exact = () => exactIndexes(tsKeyword, options.exactCacheBytes === undefined ? {} : { cacheBytes: options.exactCacheBytes });
  if (available.rows.length === 0 || options.pgvector === false) return exact();
  try {
    await sql`create extension if not exists vector`.execute(handle.db);
  } catch {
    // Installed on the server but not creatable by this role: the exact scan still answers.
  }
  const installed = await sql`select 1 from pg_extension where extname = 'vector'`.execute(handle.db);
  return installed.rows.length > 0 ? pgvectorIndexes() : exact();
}
