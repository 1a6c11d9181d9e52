import type { Kysely, Transaction } from 'kysely';
import { directWrites } from '../db/direct-writes.js';
import type { Database, KnowledgeChunksTable, StoredVector } from '../db/schema.js';

export type KnowledgeChunkRow = Omit<KnowledgeChunksTable, 'seq'> & { seq: number };
export type NewChunk = Omit<KnowledgeChunksTable, 'seq'>;
type Db = Kysely<Database> | Transaction<Database>;

const CHUNK_COLUMNS = [
  'seq',
  'id',
  'workspace_id',
  'knowledge_base_id',
  'document_id',
  'document_version',
  'position',
  'heading_path',
  'text',
  'tokens',
  'live',
  'embedding',
  'embedding_key',
  'next_embedding',
  'next_embedding_key',
  'created_at',
] as const satisfies readonly (keyof KnowledgeChunksTable)[];

/** How many rows one multi-row insert or update carries (SQLite allows 32,766 parameters). */
const BATCH = 200;

/** Chunks of one workspace. */
export class KnowledgeChunkRepository {
  constructor(
    private readonly db: Db,
    readonly workspaceId: string,
  ) {}

  withTransaction(trx: Transaction<Database>): KnowledgeChunkRepository {
    return new KnowledgeChunkRepository(trx, this.workspaceId);
  }

  /**
   * On SQLite inside a transaction, one prepared insert per row (db/direct-writes.ts): building
   * and compiling a multi-row insert of 16 columns per row through the query builder cost more
   * than SQLite's writing the rows. Answers the rows as stored, with their `seq`.
   */
  async insert(rows: NewChunk[]): Promise<KnowledgeChunkRow[]> {
    if (rows.some((row) => row.workspace_id !== this.workspaceId)) throw new Error('chunk row of another workspace');
    const direct = directWrites(this.db);
    if (direct) return rows.map((row) => ({ ...row, seq: direct.insert('knowledge_chunks', row) }));
    const seqs = new Map<string, number>();
    for (let i = 0; i < rows.length; i += BATCH) {
      for (const { id, seq } of await this.db
        .insertInto('knowledge_chunks')
        .values(rows.slice(i, i + BATCH))
        .returning(['id', 'seq'])
        .execute())
        seqs.set(id, Number(seq));
    }
    return rows.map((row) => ({ ...row, seq: seqs.get(row.id)! }));
  }

  /** A document's staged chunks of one version (not yet searchable), in order. */
  staged(documentId: string, version: number): Promise<KnowledgeChunkRow[]> {
    // The columns by name: PostgreSQL's generated `tsv` must not travel into replaceLive's insert.
    return this.db
      .selectFrom('knowledge_chunks')
      .select(CHUNK_COLUMNS)
      .where('workspace_id', '=', this.workspaceId)
      .where('document_id', '=', documentId)
      .where('document_version', '=', version)
      .where('live', '=', false)
      .orderBy('position')
      .execute() as Promise<KnowledgeChunkRow[]>;
  }

  /**
   * Turns staged chunks live with their vectors (the swap). On SQLite each row is updated in
   * place by a prepared statement. Elsewhere a delete and a multi-row insert per 200 rows, keeping
   * each chunk's `seq`: one UPDATE per chunk through the query builder cost a third of the
   * ingest benchmark's SQLite time, and PostgreSQL rewrites an updated row whole anyway.
   */
  async replaceLive(rows: KnowledgeChunkRow[]): Promise<void> {
    if (rows.some((row) => row.workspace_id !== this.workspaceId)) throw new Error('chunk row of another workspace');
    const direct = directWrites(this.db);
    if (direct) {
      const update =
        'update "knowledge_chunks" set "live" = 1, "embedding" = ?, "embedding_key" = ? where "seq" = ? and "workspace_id" = ?';
      for (const row of rows) direct.run('knowledge_chunks', update, [row.embedding, row.embedding_key, row.seq, this.workspaceId]);
      return;
    }
    for (let i = 0; i < rows.length; i += BATCH) {
      const batch = rows.slice(i, i + BATCH);
      await this.db
        .deleteFrom('knowledge_chunks')
        .where('workspace_id', '=', this.workspaceId)
        .where(
          'seq',
          'in',
          batch.map((row) => row.seq),
        )
        .execute();
      await this.db
        .insertInto('knowledge_chunks')
        .values(batch.map((row) => Object.assign({}, row, { live: true })))
        .execute();
    }
  }

  async setEmbedding(seq: number, embedding: StoredVector, key: string): Promise<void> {
    await this.db
      .updateTable('knowledge_chunks')
      .set({ embedding, embedding_key: key })
      .where('workspace_id', '=', this.workspaceId)
      .where('seq', '=', seq)
      .execute();
  }

  async setNextEmbedding(seq: number, embedding: StoredVector, key: string): Promise<void> {
    await this.db
      .updateTable('knowledge_chunks')
      .set({ next_embedding: embedding, next_embedding_key: key })
      .where('workspace_id', '=', this.workspaceId)
      .where('seq', '=', seq)
      .execute();
  }

  /** Live chunks of a document (what a swap or delete takes out of the indexes). */
  live(documentId: string): Promise<{ seq: number }[]> {
    const direct = directWrites(this.db);
    if (direct)
      return Promise.resolve(
        direct.all('select "seq" from "knowledge_chunks" where "document_id" = ? and "live" = 1 and "workspace_id" = ?', [
          documentId,
          this.workspaceId,
        ]) as { seq: number }[],
      );
    return this.db
      .selectFrom('knowledge_chunks')
      .select('seq')
      .where('workspace_id', '=', this.workspaceId)
      .where('document_id', '=', documentId)
      .where('live', '=', true)
      .execute() as Promise<{ seq: number }[]>;
  }

  /** Every chunk seq of a base that is live (a base delete takes them out of the indexes). */
  liveOfBase(baseId: string): Promise<{ seq: number }[]> {
    return this.db
      .selectFrom('knowledge_chunks')
      .select('seq')
      .where('workspace_id', '=', this.workspaceId)
      .where('knowledge_base_id', '=', baseId)
      .where('live', '=', true)
      .execute() as Promise<{ seq: number }[]>;
  }

  /** Live chunks of a base still without a vector for `key` (re-embedding), a page at a time. */
  awaitingNext(baseId: string, key: string, limit: number): Promise<Pick<KnowledgeChunkRow, 'seq' | 'heading_path' | 'text'>[]> {
    return this.db
      .selectFrom('knowledge_chunks')
      .select(['seq', 'heading_path', 'text'])
      .where('workspace_id', '=', this.workspaceId)
      .where('knowledge_base_id', '=', baseId)
      .where('live', '=', true)
      .where((eb) => eb.or([eb('next_embedding_key', 'is', null), eb('next_embedding_key', '!=', key)]))
      .orderBy('seq')
      .limit(limit)
      .execute() as Promise<Pick<KnowledgeChunkRow, 'seq' | 'heading_path' | 'text'>[]>;
  }

  /** Live chunks with their staged next vectors, a page after `afterSeq` (the swap of a re-embedding). */
  liveWithNext(baseId: string, afterSeq: number, limit: number): Promise<Pick<KnowledgeChunkRow, 'seq' | 'next_embedding'>[]> {
    return this.db
      .selectFrom('knowledge_chunks')
      .select(['seq', 'next_embedding'])
      .where('workspace_id', '=', this.workspaceId)
      .where('knowledge_base_id', '=', baseId)
      .where('live', '=', true)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute() as Promise<Pick<KnowledgeChunkRow, 'seq' | 'next_embedding'>[]>;
  }

  /** Moves every live chunk's staged vector into place (the re-embedding's swap). */
  async promoteNext(baseId: string): Promise<void> {
    await this.db
      .updateTable('knowledge_chunks')
      .set((eb) => ({
        embedding: eb.ref('next_embedding'),
        embedding_key: eb.ref('next_embedding_key'),
        next_embedding: null,
        next_embedding_key: null,
      }))
      .where('workspace_id', '=', this.workspaceId)
      .where('knowledge_base_id', '=', baseId)
      .where('live', '=', true)
      .execute();
  }

  async makeLive(seqs: number[]): Promise<void> {
    for (let i = 0; i < seqs.length; i += BATCH) {
      await this.db
        .updateTable('knowledge_chunks')
        .set({ live: true })
        .where('workspace_id', '=', this.workspaceId)
        .where('seq', 'in', seqs.slice(i, i + BATCH))
        .execute();
    }
  }

  async deleteSeqs(seqs: number[]): Promise<void> {
    const direct = directWrites(this.db);
    if (direct) {
      for (const seq of seqs)
        direct.run('knowledge_chunks', 'delete from "knowledge_chunks" where "seq" = ? and "workspace_id" = ?', [seq, this.workspaceId]);
      return;
    }
    for (let i = 0; i < seqs.length; i += BATCH) {
      await this.db
        .deleteFrom('knowledge_chunks')
        .where('workspace_id', '=', this.workspaceId)
        .where('seq', 'in', seqs.slice(i, i + BATCH))
        .execute();
    }
  }

  /** Staged chunks of a document (any version): a re-send replaces them. */
  async deleteStaged(documentId: string): Promise<void> {
    const direct = directWrites(this.db);
    if (direct) {
      direct.run('knowledge_chunks', 'delete from "knowledge_chunks" where "document_id" = ? and "live" = 0 and "workspace_id" = ?', [
        documentId,
        this.workspaceId,
      ]);
      return;
    }
    await this.db
      .deleteFrom('knowledge_chunks')
      .where('workspace_id', '=', this.workspaceId)
      .where('document_id', '=', documentId)
      .where('live', '=', false)
      .execute();
  }
}
