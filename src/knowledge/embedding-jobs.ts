import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { DialectName } from '../db/dialect/dialect.js';
import type { Database } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import { addMs } from '../lib/clock.js';
import type { BackgroundTask } from '../lib/background-loop.js';
import { ConnectionResolver } from '../ai/connection-resolver.js';
import { parseEmbedderSpec, resolveEmbedder, type Embedder } from '../ai/embedder.js';
import { ProviderError } from '../ai/provider-error.js';
import { KnowledgeBaseRepository, type KnowledgeBaseRow } from '../store/knowledge-base-repository.js';
import { KnowledgeChunkRepository, type KnowledgeChunkRow } from '../store/knowledge-chunk-repository.js';
import { KnowledgeDocumentRepository, type KnowledgeDocumentRow } from '../store/knowledge-document-repository.js';
import { claimDue, releaseLeases, renewLease } from '../store/lease-claims.js';
import { fromStoredVector, toStoredVector } from '../store/stored-vector.js';
import { chunkBody } from './chunk-body.js';
import type { SearchIndexes } from './search-indexes.js';
import type { StagedHandoff } from './staged-handoff.js';

/**
 * The background half of ingestion: embeds staged chunks and swaps them in, and re-embeds a
 * base whose embedder changed. Both are durable (rows with leases, see store/lease-claims.ts):
 * a restart, or another process once a lease expires, picks the work up where it stood.
 *
 * Failures use the provider vocabulary (ai/provider-error.ts): retryable ones are tried again
 * after the provider's `Retry-After`, or 1 s, 2 s, 4 s, … (at most 60 s), up to `maxAttempts`;
 * anything else fails at once. A failed document keeps its previous chunks searchable.
 */
export interface EmbeddingJobsOptions {
  db: Kysely<Database>;
  dialect: DialectName;
  indexes: SearchIndexes;
  clock: Clock;
  secretKey: string;
  httpAllow: readonly string[];
  owner?: string;
  leaseMs?: number;
  maxAttempts?: number;
  /** Documents claimed per pass. */
  batch?: number;
  /** Staged chunks the ingests of this process hand over (read from the database otherwise). */
  handoff?: StagedHandoff;
}

/** A claimed document with its staged chunks, embedded: what its swap writes. */
interface Embedded {
  doc: KnowledgeDocumentRow;
  base: KnowledgeBaseRow;
  embedder: Embedder;
  staged: KnowledgeChunkRow[];
  /** What keyword search and the embedder see of each staged chunk (chunk-body.ts). */
  bodies: string[];
  missing: KnowledgeChunkRow[];
}

export const DEFAULT_MAX_ATTEMPTS = 5;
/** The background task that embeds ingested documents (what an ingest pokes). */
export const EMBED_DOCUMENTS = 'embed documents';
const MAX_BACKOFF_MS = 60_000;
const REEMBED_PAGE = 256;

/** The delay before attempt `attempts + 1`: the provider's Retry-After when it named one. */
export function retryDelay(error: ProviderError, attempts: number): number {
  return error.retryAfterMs ?? Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.max(0, attempts - 1));
}

export function failure(error: unknown): { code: string; message: string } {
  if (error instanceof ProviderError) return error.toJSON();
  return { code: 'embedding_failed', message: error instanceof Error ? error.message : String(error) };
}

export function createEmbeddingJobs(options: EmbeddingJobsOptions): BackgroundTask[] {
  const owner = options.owner ?? randomUUID();
  const leaseMs = options.leaseMs ?? 60_000;
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const { db, dialect, indexes, clock } = options;
  const resolver = new ConnectionResolver(db, options.secretKey);
  const embedderOf = (base: KnowledgeBaseRow): Embedder =>
    resolveEmbedder(parseEmbedderSpec(base.embedder), {
      resolver,
      workspaceId: base.workspace_id,
      httpAllow: options.httpAllow,
      nowMs: () => clock.nowMs(),
    });
  const claim = <T extends 'knowledge_documents' | 'knowledge_bases'>(table: T, due: 'pending' | 'reembedding', limit: number) => {
    const now = clock.now();
    return claimDue(db, table, due, { dialect, owner, now, leaseUntil: addMs(now, leaseMs), limit });
  };

  /**
   * Embeds a document's staged chunks (those not yet in the target space); null when there is
   * nothing to swap. `bases` holds the bases this pass has read: the base only picks the
   * embedder here, and the swap checks it again under its lock.
   */
  async function embedDocument(
    doc: KnowledgeDocumentRow,
    signal: AbortSignal,
    bases: Map<string, KnowledgeBaseRow | undefined>,
  ): Promise<Embedded | null> {
    const baseKey = `${doc.workspace_id}:${doc.knowledge_base_id}`;
    let base = bases.get(baseKey);
    if (!bases.has(baseKey))
      bases.set(baseKey, (base = await new KnowledgeBaseRepository(db, doc.workspace_id).find(doc.knowledge_base_id)));
    if (!base) return null;
    const embedder = embedderOf(base);
    const staged =
      options.handoff?.take(doc.id, doc.version) ?? (await new KnowledgeChunkRepository(db, doc.workspace_id).staged(doc.id, doc.version));
    const bodies = staged.map((chunk) => chunkBody(JSON.parse(chunk.heading_path) as string[], chunk.text));
    const missing: KnowledgeChunkRow[] = [];
    const missingBodies: string[] = [];
    for (const [i, chunk] of staged.entries()) {
      if (chunk.embedding_key === embedder.key) continue;
      missing.push(chunk);
      missingBodies.push(bodies[i]!);
    }
    try {
      if (missing.length > 0) {
        const vectors = await embedder.embed(missingBodies, signal);
        for (const [i, chunk] of missing.entries()) {
          chunk.embedding = toStoredVector(dialect, vectors[i]!);
          chunk.embedding_key = embedder.key;
        }
      }
    } catch (error) {
      // Shutting down: not a failure of the document; its lease is released and a restart resumes it.
      if (signal.aborted) return null;
      await recordFailure(doc, error);
      return null;
    }
    return signal.aborted ? null : { doc, base, embedder, staged, bodies, missing };
  }

  /**
   * Swaps embedded documents in, all in one transaction: each transaction's FTS5 segment, index
   * pages and commit are shared by the batch (the SQLite statements of a swap cost ~145 µs a
   * chunk one document per transaction, ~115 µs four at a time, measured on the ingest corpus).
   * A batch that fails is tried again one document per transaction, so only the document at
   * fault fails.
   */
  async function swapDocuments(batch: Embedded[]): Promise<void> {
    if (batch.length === 0) return;
    if (batch.length > 1) {
      try {
        await db.transaction().execute(async (trx) => {
          for (const item of batch) await swapIn(trx, item);
        });
        return;
      } catch {
        // Tried again below, one at a time.
        indexes.forget?.();
      }
    }
    for (const item of batch) {
      await db
        .transaction()
        .execute((trx) => swapIn(trx, item))
        .catch(async (error: unknown) => {
          indexes.forget?.();
          await recordFailure(item.doc, error);
        });
    }
  }

  /** Makes one document's new chunks searchable and takes its previous ones out, inside `trx`. */
  async function swapIn(trx: Transaction<Database>, { doc, base, embedder, staged, bodies, missing }: Embedded): Promise<void> {
    const bases = new KnowledgeBaseRepository(trx, doc.workspace_id);
    const docs = new KnowledgeDocumentRepository(trx, doc.workspace_id);
    const lockedBase = await bases.findForUpdate(base.id, dialect === 'postgres');
    const current = await docs.find(base.id, doc.id);
    if (!lockedBase || !current || current.version !== doc.version || current.lease_owner !== owner) return;
    const now = clock.now();
    const scoped = new KnowledgeChunkRepository(trx, doc.workspace_id);
    // The base's embedder changed while these were embedded, or it is re-embedding towards it:
    // the vectors are kept (they are in the target space) and the document waits (pending).
    const indexKey = lockedBase.index_embedder_key;
    if (lockedBase.embedder_key !== embedder.key || (indexKey !== null && indexKey !== embedder.key)) {
      for (const chunk of missing) await scoped.setEmbedding(chunk.seq, chunk.embedding!, embedder.key);
      await docs.update(doc.id, { lease_owner: null, lease_expires_at: null, next_attempt_at: addMs(now, 1000) });
      return;
    }
    const vectors = staged.map((chunk) => fromStoredVector(chunk.embedding)!);
    const dimensions = vectors[0]?.length ?? lockedBase.index_dimensions ?? null;
    if (indexKey === null && dimensions !== null) {
      await bases.update(base.id, { index_embedder: lockedBase.embedder, index_embedder_key: embedder.key, index_dimensions: dimensions });
    } else if (dimensions !== null && lockedBase.index_dimensions !== null && dimensions !== lockedBase.index_dimensions) {
      throw new ProviderError(
        'malformed',
        `the embedder answered ${dimensions} dimensions where this base's vectors have ${lockedBase.index_dimensions}`,
      );
    }
    const old = (await scoped.live(doc.id)).map((row) => Number(row.seq));
    await indexes.remove(trx, base.id, lockedBase.index_dimensions, old);
    await scoped.deleteSeqs(old);
    if (dimensions !== null && staged.length > 0) {
      await indexes.add(
        trx,
        base.id,
        dimensions,
        staged.map((chunk, i) => ({ seq: Number(chunk.seq), body: bodies[i]!, embedding: vectors[i]! })),
      );
    }
    await scoped.replaceLive(staged);
    await docs.update(
      doc.id,
      {
        status: 'ready',
        error: null,
        chunk_count: staged.length,
        attempts: 0,
        next_attempt_at: null,
        lease_owner: null,
        lease_expires_at: null,
        updated_at: now,
      },
      doc.version,
    );
    await bases.addCounts(base.id, 0, staged.length - old.length, now);
  }

  /** A retryable failure schedules another attempt; anything else (or the last attempt) fails the document. */
  async function recordFailure(doc: KnowledgeDocumentRow, error: unknown): Promise<void> {
    const docs = new KnowledgeDocumentRepository(db, doc.workspace_id);
    const attempts = doc.attempts + 1;
    const now = clock.now();
    if (error instanceof ProviderError && error.retryable && attempts < maxAttempts) {
      await docs.update(
        doc.id,
        {
          attempts,
          next_attempt_at: addMs(now, retryDelay(error, attempts)),
          error: JSON.stringify(failure(error)),
          lease_owner: null,
          lease_expires_at: null,
        },
        doc.version,
      );
      return;
    }
    await db.transaction().execute(async (trx) => {
      const failed = await docs.withTransaction(trx).update(
        doc.id,
        {
          status: 'failed',
          attempts,
          error: JSON.stringify(failure(error)),
          next_attempt_at: null,
          lease_owner: null,
          lease_expires_at: null,
          updated_at: now,
        },
        doc.version,
      );
      // The staged version is dropped; the previous version's chunks stay searchable.
      if (failed) await new KnowledgeChunkRepository(trx, doc.workspace_id).deleteStaged(doc.id);
    });
  }

  /** Re-embeds every live chunk of a base for its new embedder, then swaps the vectors in one transaction. */
  async function processBase(base: KnowledgeBaseRow, signal: AbortSignal): Promise<void> {
    const bases = new KnowledgeBaseRepository(db, base.workspace_id);
    const chunks = new KnowledgeChunkRepository(db, base.workspace_id);
    const embedder = embedderOf(base);
    try {
      for (;;) {
        const page = await chunks.awaitingNext(base.id, embedder.key, REEMBED_PAGE);
        if (page.length === 0 || signal.aborted) break;
        const vectors = await embedder.embed(
          page.map((chunk) => chunkBody(JSON.parse(chunk.heading_path) as string[], chunk.text)),
          signal,
        );
        await db.transaction().execute(async (trx) => {
          for (const [i, chunk] of page.entries())
            await chunks.withTransaction(trx).setNextEmbedding(Number(chunk.seq), toStoredVector(dialect, vectors[i]!), embedder.key);
        });
        const now = clock.now();
        if (!(await renewLease(db, 'knowledge_bases', base.id, owner, addMs(now, leaseMs)))) return;
      }
      if (signal.aborted) return;
      await db.transaction().execute(async (trx) => {
        const locked = await bases.withTransaction(trx).findForUpdate(base.id, dialect === 'postgres');
        if (!locked || locked.embedder_key !== embedder.key || locked.lease_owner !== owner) return;
        const scoped = chunks.withTransaction(trx);
        const seqs: number[] = [];
        const vectors: Float32Array[] = [];
        for (let after = 0; ;) {
          const page = await scoped.liveWithNext(base.id, after, 1000);
          if (page.length === 0) break;
          for (const row of page) {
            seqs.push(Number(row.seq));
            vectors.push(fromStoredVector(row.next_embedding)!);
          }
          after = Number(page.at(-1)!.seq);
        }
        const dimensions = vectors[0]?.length ?? null;
        if (dimensions !== null) await indexes.replaceVectors(trx, base.id, locked.index_dimensions, seqs, dimensions, vectors);
        await scoped.promoteNext(base.id);
        await bases.withTransaction(trx).update(base.id, {
          index_embedder: dimensions === null ? null : locked.embedder,
          index_embedder_key: dimensions === null ? null : embedder.key,
          index_dimensions: dimensions,
          embedder_status: 'ready',
          embedder_error: null,
          attempts: 0,
          next_attempt_at: null,
          lease_owner: null,
          lease_expires_at: null,
          updated_at: clock.now(),
        });
      });
    } catch (error) {
      if (signal.aborted) return;
      const attempts = base.attempts + 1;
      const now = clock.now();
      const retry = error instanceof ProviderError && error.retryable && attempts < maxAttempts;
      await bases.update(base.id, {
        attempts,
        embedder_error: JSON.stringify(failure(error)),
        ...(retry
          ? { next_attempt_at: addMs(now, retryDelay(error as ProviderError, attempts)) }
          : { embedder_status: 'failed', next_attempt_at: null }),
        lease_owner: null,
        lease_expires_at: null,
      });
    }
  }

  const batch = options.batch ?? 16;
  return [
    {
      name: EMBED_DOCUMENTS,
      batch,
      run: async (signal) => {
        const claimed = await claim('knowledge_documents', 'pending', batch);
        const embedded: Embedded[] = [];
        const bases = new Map<string, KnowledgeBaseRow | undefined>();
        for (const doc of claimed) {
          if (signal.aborted) break;
          const item = await embedDocument(doc, signal, bases);
          if (item) embedded.push(item);
        }
        if (!signal.aborted) await swapDocuments(embedded);
        return claimed.length;
      },
      release: () => releaseLeases(db, 'knowledge_documents', owner),
    },
    {
      name: 're-embed knowledge bases',
      batch: 1,
      run: async (signal) => {
        const claimed = await claim('knowledge_bases', 'reembedding', 1);
        for (const base of claimed) await processBase(base, signal);
        return claimed.length;
      },
      release: () => releaseLeases(db, 'knowledge_bases', owner),
    },
  ];
}
