import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { DialectName } from '../db/dialect/dialect.js';
import type { Database } from '../db/schema.js';
import { toStoredVector } from '../store/stored-vector.js';

/** What the search indexes of every dialect share: their interface, types and SQL pieces. */
export const VECTOR_MODES = ['sqlite-vec', 'pgvector', 'exact'] as const;
export type VectorMode = (typeof VECTOR_MODES)[number];

export type Db = Kysely<Database> | Transaction<Database>;

export interface IndexedChunk {
  seq: number;
  /** Heading path and text: what keyword search matches. */
  body: string;
  embedding: Float32Array;
}

export interface ScoredSeq {
  seq: number;
  score: number;
}

/** Equality on metadata keys; values are JSON scalars. */
export type MetadataFilter = Record<string, string | number | boolean | null>;

export const METADATA_KEY = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;

/** The vector table of a dimension, by name (for statements prepared outside the query builder). */
export const vectorTableName = (dimensions: number) => `knowledge_vectors_${Math.trunc(dimensions)}`;
export const vectorTable = (dimensions: number) => sql.table(vectorTableName(dimensions));

export function metadataConditions(dialect: DialectName, filter: MetadataFilter | null): RawBuilder<unknown>[] {
  if (!filter) return [];
  return Object.entries(filter).map(([key, value]) => {
    if (!METADATA_KEY.test(key)) throw new Error(`invalid metadata key ${key}`);
    if (dialect === 'postgres') return sql`(d.metadata::jsonb -> ${key}) = ${JSON.stringify(value)}::jsonb`;
    const path = `$."${key}"`;
    if (value === null) return sql`json_type(d.metadata, ${path}) = 'null'`;
    if (typeof value === 'boolean') return sql`json_type(d.metadata, ${path}) = ${value ? 'true' : 'false'}`;
    if (typeof value === 'number')
      return sql`json_type(d.metadata, ${path}) in ('integer', 'real') and json_extract(d.metadata, ${path}) = ${value}`;
    return sql`json_type(d.metadata, ${path}) = 'text' and json_extract(d.metadata, ${path}) = ${value}`;
  });
}

export const and = (conditions: RawBuilder<unknown>[]) => (conditions.length === 0 ? sql`` : sql` and ${sql.join(conditions, sql` and `)}`);

/** Terms of a keyword query as an FTS5 / tsquery disjunction (bm25 and ts_rank reward matching more of them). */
export function keywordQuery(dialect: DialectName, terms: string[]): string {
  return dialect === 'postgres' ? terms.join(' | ') : terms.map((term) => `"${term}"`).join(' OR ');
}

export interface SearchIndexes {
  readonly vectorMode: VectorMode;
  /** Makes chunks searchable; inside the transaction that flips them live. */
  add(trx: Transaction<Database>, baseId: string, dimensions: number, chunks: IndexedChunk[]): Promise<void>;
  /** Takes chunks out of the indexes; inside the transaction that deletes them or replaces them. */
  remove(trx: Transaction<Database>, baseId: string, dimensions: number | null, seqs: number[]): Promise<void>;
  /** Forgets what the indexes keep per base beyond its chunks (IVF lists); inside the base's delete. */
  dropBase(trx: Transaction<Database>, baseId: string): Promise<void>;
  /** Replaces a base's vectors (a re-embedding's swap); the text index is unchanged. */
  replaceVectors(
    trx: Transaction<Database>,
    baseId: string,
    oldDimensions: number | null,
    seqs: number[],
    dimensions: number,
    vectors: Float32Array[],
  ): Promise<void>;
  /** The base's live chunks nearest to `query` (scores: cosine similarity), best first. */
  nearest(db: Db, baseId: string, dimensions: number, query: Float32Array, k: number, filter: MetadataFilter | null): Promise<ScoredSeq[]>;
  /** The base's live chunks matching any term, best first (scores: -bm25 or ts_rank). */
  keyword(db: Db, baseId: string, terms: string[], k: number, filter: MetadataFilter | null): Promise<ScoredSeq[]>;
  /**
   * A transaction that wrote to the indexes rolled back: forget what was remembered from inside
   * it (tables created, IVF lists trained), so the next write looks again.
   */
  forget?(): void;
  /** Resolves once what the indexes run beside the connection has started: whether it did (tests, benchmarks). */
  ready?(): Promise<boolean>;
  /** Stops what the indexes run beside the connection (SQLite's vector reader thread). */
  close?(): Promise<void>;
}

export const BATCH = 200;

/** Exact cosine scores over the base's live chunks that pass the filter (vectors are L2-normalised). */
export async function exactNearest(
  db: Db,
  dialect: DialectName,
  baseId: string,
  query: Float32Array,
  k: number,
  filter: MetadataFilter | null,
): Promise<ScoredSeq[]> {
  const conditions = metadataConditions(dialect, filter);
  const join = conditions.length > 0 ? sql`join knowledge_documents d on d.id = c.document_id` : sql``;
  const score =
    dialect === 'postgres'
      ? sql`(select sum(a * b) from unnest(c.embedding, ${toStoredVector('postgres', query)}::real[]) as t(a, b))`
      : sql`1 - vec_distance_cosine(c.embedding, ${toStoredVector('sqlite', query)})`;
  const live = dialect === 'postgres' ? sql`c.live` : sql`c.live = 1`;
  const result = await sql<{ seq: number | string; score: number }>`
    select c.seq, ${score} as score from knowledge_chunks c ${join}
    where c.knowledge_base_id = ${baseId} and ${live} and c.embedding is not null${and(conditions)}
    order by score desc, c.seq limit ${k}`.execute(db);
  return result.rows.map((row) => ({ seq: Number(row.seq), score: Number(row.score) }));
}
