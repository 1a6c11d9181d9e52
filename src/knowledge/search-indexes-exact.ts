import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { BATCH, exactNearest, type Db, type ScoredSeq, type SearchIndexes } from './search-sql.js';

/**
 * Exact vector search on PostgreSQL without pgvector: each base's vectors are kept in this
 * process's memory (one Float32Array per base) and scanned there.
 *
 * Why: PostgreSQL has no vector arithmetic without the extension; the dot product as SQL
 * (`sum(a * b)` over `unnest` of two `real[]`) cost ~40 µs a row, 4-9 s a search at 110,000
 * chunks (bench/results/knowledge.md). The same scan in JavaScript is ~0.2 µs a 256-float vector.
 *
 * Freshness: every change to a base's searchable vectors (a swap, a delete, a re-embedding) goes
 * through `add`, `remove` or `replaceVectors` below, inside the transaction that makes it, and
 * those raise `knowledge_bases.index_version` there. A search reads the base row first (it
 * always did: scope and embedder), and uses the copy in memory only when it was loaded at that
 * very version; otherwise it loads what changed, in one repeatable-read snapshot with the version:
 * the seqs of the base's vectors, and the vectors of the seqs it does not hold (all of them after
 * a re-embedding). Any process, any writer through this code: the version tells.
 *
 * Vectors travel as `bytea` of big-endian float4 (`knowledge_exact_vectors`, migration 0011),
 * written here beside each live chunk. A base whose rows there do not add up to its live chunks
 * (rows written while the server ran with pgvector, or before migration 0011) is copied again
 * from its chunks' `real[]` column on its first search.
 *
 * Memory: 4 bytes a dimension a vector (110,000 vectors of 256 dimensions: 113 MB), at most
 * `cacheBytes` over all bases, the least recently searched dropped first; a base larger than
 * the budget is scanned in SQL as before (slow, exact). A metadata filter also goes to SQL.
 */
export const EXACT_CACHE_BYTES = 512 * 1024 * 1024;

interface BaseVectors {
  version: number;
  dimensions: number;
  /** Slot -> seq; vectors[slot * dimensions ...] is its vector. */
  seqs: number[];
  slots: Map<number, number>;
  vectors: Float32Array;
}

function bytesOf(vector: Float32Array): Buffer {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatBE(vector[i]!, i * 4);
  return bytes;
}

/** The `k` best slots by dot product with `query`, best first (ties: lower seq first). */
export function scanTopK(vectors: Float32Array, seqs: number[], dimensions: number, query: Float32Array, k: number): ScoredSeq[] {
  const top: ScoredSeq[] = [];
  let floor = Number.NEGATIVE_INFINITY;
  const count = seqs.length;
  for (let slot = 0, offset = 0; slot < count; slot++, offset += dimensions) {
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    let i = 0;
    for (; i + 3 < dimensions; i += 4) {
      s0 += vectors[offset + i]! * query[i]!;
      s1 += vectors[offset + i + 1]! * query[i + 1]!;
      s2 += vectors[offset + i + 2]! * query[i + 2]!;
      s3 += vectors[offset + i + 3]! * query[i + 3]!;
    }
    for (; i < dimensions; i++) s0 += vectors[offset + i]! * query[i]!;
    const score = s0 + s1 + s2 + s3;
    if (top.length === k && score < floor) continue;
    const seq = seqs[slot]!;
    let at = top.length;
    while (at > 0 && (top[at - 1]!.score < score || (top[at - 1]!.score === score && top[at - 1]!.seq > seq))) at--;
    if (at >= k) continue;
    top.splice(at, 0, { seq, score });
    if (top.length > k) top.pop();
    if (top.length === k) floor = top[k - 1]!.score;
  }
  return top;
}

export function exactIndexes(keyword: SearchIndexes['keyword'], options: { cacheBytes?: number } = {}): SearchIndexes {
  const budget = options.cacheBytes ?? EXACT_CACHE_BYTES;
  /** Insertion order is recency: a base is moved to the end when searched. */
  const cache = new Map<string, BaseVectors>();
  const sizeOf = (entry: BaseVectors) => entry.vectors.byteLength;

  /** Raises the base's version (locking its row to the commit) and answers the new one. */
  const bump = async (trx: Db, baseId: string): Promise<number> => {
    const result = await sql<{
      index_version: number;
    }>`update knowledge_bases set index_version = index_version + 1 where id = ${baseId} returning index_version`.execute(trx);
    return Number(result.rows[0]?.index_version ?? 0);
  };
  const insertRows = async (trx: Db, baseId: string, rows: { seq: number; embedding: Float32Array }[]) => {
    const version = await bump(trx, baseId);
    for (let i = 0; i < rows.length; i += BATCH) {
      const values = rows.slice(i, i + BATCH).map((row) => sql`(${row.seq}, ${baseId}, ${version}, ${bytesOf(row.embedding)})`);
      await sql`insert into knowledge_exact_vectors (seq, knowledge_base_id, version, embedding) values ${sql.join(values)}
        on conflict (seq) do update set knowledge_base_id = excluded.knowledge_base_id, version = excluded.version, embedding = excluded.embedding`.execute(
        trx,
      );
    }
  };

  /** Copies a base's live vectors into knowledge_exact_vectors again from the chunks' `real[]`. */
  const rebuild = async (trx: Db, baseId: string, version: number) => {
    await sql`delete from knowledge_exact_vectors where knowledge_base_id = ${baseId}`.execute(trx);
    await sql`insert into knowledge_exact_vectors (seq, knowledge_base_id, version, embedding)
      select c.seq, c.knowledge_base_id, ${version}, (select string_agg(float4send(x), ''::bytea order by i) from unnest(c.embedding) with ordinality as u(x, i))
      from knowledge_chunks c where c.knowledge_base_id = ${baseId} and c.live and c.embedding is not null`.execute(trx);
  };

  /**
   * The base's vectors as of one repeatable-read snapshot: the seqs it holds, and the vectors
   * written after the copy in memory (all of them without one). Null: over the budget.
   */
  const load = (db: Kysely<Database>, baseId: string, dimensions: number): Promise<BaseVectors | null> => {
    const previous = cache.get(baseId);
    return db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const base = await sql<{
          index_version: number;
          chunk_count: number;
        }>`select index_version, chunk_count from knowledge_bases where id = ${baseId}`.execute(trx);
        const row = base.rows[0];
        if (!row || Number(row.chunk_count) * dimensions * 4 > budget) return null;
        const version = Number(row.index_version);
        let seqs = (
          await sql<{ seq: string }>`select seq from knowledge_exact_vectors where knowledge_base_id = ${baseId} order by seq`.execute(trx)
        ).rows.map((r) => Number(r.seq));
        let kept = previous && previous.dimensions === dimensions ? previous : null;
        if (seqs.length !== Number(row.chunk_count)) {
          // Rows missing or left over (see above): copied again, in this snapshot's transaction.
          await rebuild(trx, baseId, version);
          seqs = (
            await sql<{ seq: string }>`select seq from knowledge_exact_vectors where knowledge_base_id = ${baseId} order by seq`.execute(
              trx,
            )
          ).rows.map((r) => Number(r.seq));
          kept = null;
        }
        const fetched = new Map<number, Buffer>();
        const rows = await sql<{ seq: string; embedding: Buffer }>`
        select seq, embedding from knowledge_exact_vectors where knowledge_base_id = ${baseId} and version > ${kept ? kept.version : -1}`.execute(
          trx,
        );
        for (const r of rows.rows) fetched.set(Number(r.seq), r.embedding);
        const vectors = new Float32Array(seqs.length * dimensions);
        const slots = new Map<number, number>();
        for (const [slot, seq] of seqs.entries()) {
          slots.set(seq, slot);
          const offset = slot * dimensions;
          const bytes = fetched.get(seq);
          if (bytes) {
            if (bytes.length !== dimensions * 4)
              throw new Error(`the vector of chunk ${seq} has ${bytes.length / 4} dimensions, its base ${dimensions}`);
            for (let i = 0; i < dimensions; i++) vectors[offset + i] = bytes.readFloatBE(i * 4);
            continue;
          }
          const from = kept?.slots.get(seq);
          if (from === undefined) throw new Error(`the vector of chunk ${seq} is neither held nor newer than version ${kept?.version}`);
          vectors.set(kept!.vectors.subarray(from * dimensions, (from + 1) * dimensions), offset);
        }
        return { version, dimensions, seqs, slots, vectors };
      });
  };

  const remember = (baseId: string, entry: BaseVectors) => {
    cache.delete(baseId);
    let total = sizeOf(entry);
    for (const other of cache.values()) total += sizeOf(other);
    for (const [id, other] of cache) {
      if (total <= budget) break;
      cache.delete(id);
      total -= sizeOf(other);
    }
    cache.set(baseId, entry);
  };

  return {
    vectorMode: 'exact',
    async add(trx, baseId, _dimensions, chunks) {
      await insertRows(trx, baseId, chunks);
    },
    async remove(trx, baseId, _dimensions, seqs) {
      if (seqs.length === 0) return;
      for (let i = 0; i < seqs.length; i += BATCH)
        await sql`delete from knowledge_exact_vectors where seq = any(${seqs.slice(i, i + BATCH)}::bigint[])`.execute(trx);
      await bump(trx, baseId);
    },
    async dropBase(trx, baseId) {
      await sql`delete from knowledge_exact_vectors where knowledge_base_id = ${baseId}`.execute(trx);
      cache.delete(baseId);
    },
    async replaceVectors(trx, baseId, _oldDimensions, seqs, _dimensions, vectors) {
      // Every row is written again at the new version: a process holding the old vectors fetches them all.
      await insertRows(
        trx,
        baseId,
        seqs.map((seq, i) => ({ seq, embedding: vectors[i]! })),
      );
    },
    async nearest(db, baseId, dimensions, query, k, filter) {
      if ((filter && Object.keys(filter).length > 0) || db.isTransaction) return exactNearest(db, 'postgres', baseId, query, k, filter);
      const version = await sql<{ index_version: number }>`select index_version from knowledge_bases where id = ${baseId}`.execute(db);
      let entry = cache.get(baseId);
      if (!entry || entry.dimensions !== dimensions || entry.version !== Number(version.rows[0]?.index_version)) {
        const loaded = await load(db as Kysely<Database>, baseId, dimensions).catch((error: unknown) => {
          // A copy made again (above) raced a writer of the same rows: this search scans in SQL.
          if ((error as { code?: unknown }).code === '40001') return null;
          throw error;
        });
        if (!loaded) {
          cache.delete(baseId);
          return exactNearest(db, 'postgres', baseId, query, k, filter);
        }
        entry = loaded;
      }
      remember(baseId, entry);
      return scanTopK(entry.vectors, entry.seqs, dimensions, query, k);
    },
    keyword,
  };
}
