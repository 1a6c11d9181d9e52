import { sql, type Transaction } from 'kysely';
import { directWrites } from '../db/direct-writes.js';
import type { Database } from '../db/schema.js';
import { fromStoredVector, toStoredVector } from '../store/stored-vector.js';
import { IVF_MIN_VECTORS, nearestList, probeLists, trainCentroids } from './ivf-lists.js';
import { ftsKeyword, KEYWORD_POSTINGS_BUDGET, keywordState } from './keyword-search-sqlite.js';
import {
  BATCH,
  exactNearest,
  vectorTable,
  vectorTableName,
  type Db,
  type MetadataFilter,
  type ScoredSeq,
  type SearchIndexes,
} from './search-sql.js';
import type { VectorReader } from './vector-reader.js';

/**
 * The SQLite indexes: FTS5 for keywords (knowledge_chunks_fts, from migration 0008) and
 * sqlite-vec `vec0` tables for vectors, one per dimension, created when first needed. A vec0
 * partition is a base (`<base id>`), or once the base is large one IVF list of it
 * (`<base id>:<list>`, see ivf-lists.ts); centroids live in `knowledge_ivf_centroids`.
 */
const castSeqs = (seqs: number[]) => sql.join(seqs.map((seq) => sql`cast(${seq} as integer)`));

export function sqliteIndexes(
  options: { ivfMinVectors?: number; keywordBudget?: number; ftsVersion?: (() => string) | null; reader?: VectorReader | null } = {},
): SearchIndexes {
  const reader = options.reader ?? null;
  const ivfMinVectors = options.ivfMinVectors ?? IVF_MIN_VECTORS;
  const ensured = new Set<number>();
  // The temp tables of the keyword search live in this connection's temp schema.
  const keyword = keywordState(options.keywordBudget ?? KEYWORD_POSTINGS_BUDGET, options.ftsVersion ?? null);
  /** Centroids per base (null: not trained), as stored; dropped from here whenever they change. */
  const centroidCache = new Map<string, Float32Array[] | null>();
  let centroidTable = false;

  const ensureCentroids = async (db: Db) => {
    if (centroidTable) return;
    await sql`create table if not exists knowledge_ivf_centroids (knowledge_base_id text not null, list integer not null, centroid blob not null, primary key (knowledge_base_id, list))`.execute(
      db,
    );
    centroidTable = true;
  };
  const ensure = async (db: Db, dimensions: number) => {
    await ensureCentroids(db);
    if (ensured.has(dimensions)) return;
    await sql`create virtual table if not exists ${vectorTable(dimensions)} using vec0(knowledge_base_id text partition key, embedding float[${sql.raw(String(Math.trunc(dimensions)))}] distance_metric=cosine)`.execute(
      db,
    );
    ensured.add(dimensions);
  };
  const centroidsOf = async (db: Db, baseId: string): Promise<Float32Array[] | null> => {
    let centroids = centroidCache.get(baseId);
    if (centroids === undefined) {
      const rows = await sql<{
        centroid: Buffer;
      }>`select centroid from knowledge_ivf_centroids where knowledge_base_id = ${baseId} order by list`.execute(db);
      centroids = rows.rows.length > 0 ? rows.rows.map((row) => fromStoredVector(row.centroid)!) : null;
      centroidCache.set(baseId, centroids);
    }
    return centroids;
  };
  const partition = (baseId: string, centroids: Float32Array[] | null, vector: Float32Array) =>
    centroids ? `${baseId}:${nearestList(centroids, vector)}` : baseId;
  /** The partitions a search scans: the base's, or its IVF lists nearest to the query. */
  const partitionsOf = (baseId: string, centroids: Float32Array[] | null, query: Float32Array) =>
    centroids ? probeLists(centroids, query).map((list) => `${baseId}:${list}`) : [baseId];
  const best = (rows: { seq: number; distance: number }[], k: number): ScoredSeq[] =>
    rows
      .map((row) => ({ seq: row.seq, score: 1 - row.distance }))
      .sort((a, b) => b.score - a.score || a.seq - b.seq)
      .slice(0, k);
  const scanInline = async (db: Db, baseId: string, dimensions: number, query: Float32Array, k: number): Promise<ScoredSeq[]> => {
    await ensure(db, dimensions);
    const rows: { seq: number; distance: number }[] = [];
    for (const key of partitionsOf(baseId, await centroidsOf(db, baseId), query)) {
      const result = await sql<{ seq: number; distance: number }>`
        select rowid as seq, distance from ${vectorTable(dimensions)}
        where embedding match ${toStoredVector('sqlite', query)} and k = ${k} and knowledge_base_id = ${key}`.execute(db);
      for (const row of result.rows) rows.push({ seq: Number(row.seq), distance: Number(row.distance) });
    }
    return best(rows, k);
  };

  // In a transaction (every write here is), one prepared statement per row (db/direct-writes.ts);
  // otherwise multi-row inserts: building and running one statement per chunk through the query
  // builder cost more than the indexing itself.
  const insertVectors = async (trx: Db, baseId: string, dimensions: number, rows: { seq: number; embedding: Float32Array }[]) => {
    await ensure(trx, dimensions);
    const centroids = await centroidsOf(trx, baseId);
    const direct = directWrites(trx);
    if (direct) {
      const table = vectorTableName(dimensions);
      const insert = `insert into ${table} (rowid, knowledge_base_id, embedding) values (cast(? as integer), ?, ?)`;
      for (const row of rows)
        direct.run(table, insert, [row.seq, partition(baseId, centroids, row.embedding), toStoredVector('sqlite', row.embedding)]);
      return;
    }
    for (let i = 0; i < rows.length; i += BATCH) {
      const values = rows
        .slice(i, i + BATCH)
        .map(
          (row) =>
            sql`(cast(${row.seq} as integer), ${partition(baseId, centroids, row.embedding)}, ${toStoredVector('sqlite', row.embedding)})`,
        );
      await sql`insert into ${vectorTable(dimensions)} (rowid, knowledge_base_id, embedding) values ${sql.join(values)}`.execute(trx);
    }
  };
  const deleteVectors = async (trx: Db, dimensions: number, seqs: number[]) => {
    await ensure(trx, dimensions);
    const direct = directWrites(trx);
    if (direct) {
      const table = vectorTableName(dimensions);
      for (const seq of seqs) direct.run(table, `delete from ${table} where rowid = cast(? as integer)`, [seq]);
      return;
    }
    for (let i = 0; i < seqs.length; i += BATCH)
      await sql`delete from ${vectorTable(dimensions)} where rowid in (${castSeqs(seqs.slice(i, i + BATCH))})`.execute(trx);
  };
  const dropCentroids = async (trx: Db, baseId: string) => {
    await sql`delete from knowledge_ivf_centroids where knowledge_base_id = ${baseId}`.execute(trx);
    centroidCache.delete(baseId);
  };
  /**
   * Trains the base's lists once it holds enough vectors, and files its vectors into them: the
   * vectors are read back from the base's one partition and written again, list by list. Runs
   * inside the swap that crossed the threshold (once per base; a few seconds at 8,192 vectors).
   */
  const maybeTrain = async (trx: Db, baseId: string, dimensions: number) => {
    if ((await centroidsOf(trx, baseId)) !== null) return;
    // The base's counter, not a count of its chunks (that scanned the base on every swap); it
    // lags by the swap in progress (counted after this), which only delays training by a swap.
    const direct = directWrites(trx);
    const count = direct
      ? (direct.get('select chunk_count as n from knowledge_bases where id = ?', [baseId]) as { n: number } | undefined)
      : (await sql<{ n: number }>`select chunk_count as n from knowledge_bases where id = ${baseId}`.execute(trx)).rows[0];
    if (Number(count?.n ?? 0) < ivfMinVectors) return;
    const rows = await sql<{
      seq: number;
      embedding: Buffer;
    }>`select rowid as seq, embedding from ${vectorTable(dimensions)} where knowledge_base_id = ${baseId}`.execute(trx);
    const vectors = rows.rows.map((row) => ({ seq: Number(row.seq), embedding: fromStoredVector(row.embedding)! }));
    if (vectors.length < ivfMinVectors) return;
    const centroids = trainCentroids(vectors.map((v) => v.embedding));
    for (const [list, centroid] of centroids.entries())
      await sql`insert into knowledge_ivf_centroids (knowledge_base_id, list, centroid) values (${baseId}, ${list}, ${toStoredVector('sqlite', centroid)})`.execute(
        trx,
      );
    centroidCache.set(baseId, centroids);
    await deleteVectors(
      trx,
      dimensions,
      vectors.map((v) => v.seq),
    );
    await insertVectors(trx, baseId, dimensions, vectors);
  };

  return {
    vectorMode: 'sqlite-vec',
    async add(trx: Transaction<Database>, baseId, dimensions, chunks) {
      await insertVectors(trx, baseId, dimensions, chunks);
      const direct = directWrites(trx);
      if (direct) {
        for (const chunk of chunks)
          direct.run('knowledge_chunks_fts', 'insert into knowledge_chunks_fts (rowid, body, kb) values (cast(? as integer), ?, ?)', [
            chunk.seq,
            chunk.body,
            baseId,
          ]);
      } else {
        for (let i = 0; i < chunks.length; i += BATCH) {
          const values = chunks.slice(i, i + BATCH).map((chunk) => sql`(cast(${chunk.seq} as integer), ${chunk.body}, ${baseId})`);
          await sql`insert into knowledge_chunks_fts (rowid, body, kb) values ${sql.join(values)}`.execute(trx);
        }
      }
      await maybeTrain(trx, baseId, dimensions);
    },
    async remove(trx, _baseId, dimensions, seqs) {
      if (seqs.length === 0) return;
      if (dimensions !== null) await deleteVectors(trx, dimensions, seqs);
      const direct = directWrites(trx);
      if (direct) {
        for (const seq of seqs) direct.run('knowledge_chunks_fts', 'delete from knowledge_chunks_fts where rowid = ?', [seq]);
        return;
      }
      for (let i = 0; i < seqs.length; i += BATCH)
        await sql`delete from knowledge_chunks_fts where rowid in (${castSeqs(seqs.slice(i, i + BATCH))})`.execute(trx);
    },
    async dropBase(trx, baseId) {
      await ensureCentroids(trx);
      await dropCentroids(trx, baseId);
    },
    async replaceVectors(trx, baseId, oldDimensions, seqs, dimensions, vectors) {
      if (oldDimensions !== null) await deleteVectors(trx, oldDimensions, seqs);
      // New vectors, new space: the lists are trained again from them.
      await ensure(trx, dimensions);
      await dropCentroids(trx, baseId);
      await insertVectors(
        trx,
        baseId,
        dimensions,
        seqs.map((seq, i) => ({ seq, embedding: vectors[i]! })),
      );
      await maybeTrain(trx, baseId, dimensions);
    },
    nearest(db, baseId, dimensions, query, k, filter: MetadataFilter | null): Promise<ScoredSeq[]> {
      if (filter && Object.keys(filter).length > 0) return exactNearest(db, 'sqlite', baseId, query, k, filter);
      // Known table and lists: the scan is handed to the reader thread at once, before the
      // keyword half of a hybrid search starts running SQL on this thread. In a transaction the
      // scan must see its uncommitted rows, which only this connection can.
      const centroids = ensured.has(dimensions) && centroidTable ? centroidCache.get(baseId) : undefined;
      if (centroids !== undefined && reader && !db.isTransaction) {
        const scanned = reader.knn(vectorTableName(dimensions), partitionsOf(baseId, centroids, query), query, k);
        if (scanned)
          return scanned.then(
            (rows) => best(rows, k),
            () => scanInline(db, baseId, dimensions, query, k),
          );
      }
      return scanInline(db, baseId, dimensions, query, k);
    },
    keyword: (db, baseId, terms, k, filter) => ftsKeyword(db, baseId, terms, k, filter, keyword),
    forget() {
      ensured.clear();
      centroidTable = false;
      centroidCache.clear();
    },
    ready: async () => (reader ? reader.whenReady() : false),
    close: async () => {
      await reader?.close();
    },
  };
}
