import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { notFound } from '../../errors/app-error.js';
import type { Clock } from '../../lib/clock.js';
import { isUuid, newId } from '../../lib/ids.js';
import { isPlainObject } from '../../lib/json.js';
import { unstorable } from '../../lib/storable-text.js';
import { chunkDocument } from '../../knowledge/chunk-document.js';
import type { SearchIndexes } from '../../knowledge/search-indexes.js';
import type { StagedHandoff } from '../../knowledge/staged-handoff.js';
import { KnowledgeBaseRepository, type KnowledgeBaseRow } from '../../store/knowledge-base-repository.js';
import { KnowledgeChunkRepository, type NewChunk } from '../../store/knowledge-chunk-repository.js';
import { KnowledgeDocumentRepository, type KnowledgeDocumentRow } from '../../store/knowledge-document-repository.js';
import { readString, rejectUnknown, Violations, type AttributeInput } from '../attribute-input.js';
import type { Actor } from '../workflows/workflow-service.js';
import type { KnowledgeBaseService } from './knowledge-base-service.js';

export const DOCUMENT_CONTENT_TYPES = ['text/markdown', 'text/plain'] as const;
export type DocumentContentType = (typeof DOCUMENT_CONTENT_TYPES)[number];
/** A document's text, at most (the route's body limit is set to match). */
export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;
const MAX_METADATA_BYTES = 16 * 1024;

export type IngestOutcome = 'created' | 'replaced' | 'unchanged';

/**
 * Document ingest. The text is chunked here, in the request (fast: tokens are counted with a
 * cache), and the chunks are stored staged; embedding happens in the background
 * (knowledge/embedding-jobs.ts), which swaps them in when all are embedded.
 *
 * A document is identified in its base by `external_key`, or by its title when it has none.
 * Re-sending one: identical content (sha256) changes nothing but title, content type and
 * metadata (answered `unchanged`); changed content stages the new chunks as a new version
 * (`replaced`) while the previous version's stay searchable until the swap.
 */
export class KnowledgeDocumentService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly bases: KnowledgeBaseService,
    private readonly indexes: SearchIndexes,
    private readonly onWork: () => void,
    /** Where committed staged chunks go for this process's embedding loop (knowledge/staged-handoff.ts). */
    private readonly handoff: StagedHandoff | null = null,
  ) {}

  async get(actor: Actor, baseId: string, id: string): Promise<KnowledgeDocumentRow> {
    const base = await this.bases.get(actor, baseId);
    const row = isUuid(id) ? await new KnowledgeDocumentRepository(this.db, actor.workspaceId).find(base.id, id) : undefined;
    if (!row) throw notFound('document');
    return row;
  }

  async ingest(actor: Actor, baseId: string, input: AttributeInput): Promise<{ document: KnowledgeDocumentRow; outcome: IngestOutcome }> {
    const base = await this.bases.get(actor, baseId);
    const violations = new Violations();
    rejectUnknown(
      input,
      ['title', 'content', 'content_type', 'external_key', 'metadata'],
      violations,
      (name) => `${name} is not a document attribute (title, content, content_type, external_key, metadata)`,
    );
    const title = readString(input, 'title', violations, { required: true, max: 500 });
    const externalKey = readString(input, 'external_key', violations, { max: 500, nullable: true });
    const content = input.values.content;
    if (typeof content !== 'string') violations.add(input.pointer('content'), "content is required: the document's text");
    else if (Buffer.byteLength(content) > MAX_DOCUMENT_BYTES)
      violations.add(input.pointer('content'), `content must be at most ${MAX_DOCUMENT_BYTES} bytes`);
    // A raw body (or the title and key of its query) is not JSON the media-type parser checked.
    for (const [name, value] of [
      ['content', content],
      ['title', title],
      ['external_key', externalKey],
    ] as const) {
      const problem = typeof value === 'string' ? unstorable(value) : null;
      if (problem) violations.add(input.pointer(name), `${name} ${problem}`);
    }
    const contentType = String(input.values.content_type ?? 'text/markdown')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    if (!DOCUMENT_CONTENT_TYPES.includes(contentType as DocumentContentType))
      violations.add(input.pointer('content_type'), `content_type must be one of ${DOCUMENT_CONTENT_TYPES.join(', ')}`);
    const metadata = input.values.metadata ?? {};
    if (!isPlainObject(metadata)) violations.add(input.pointer('metadata'), 'metadata must be an object');
    else if (Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES)
      violations.add(input.pointer('metadata'), `metadata must be at most ${MAX_METADATA_BYTES} bytes as JSON`);
    violations.throwIfAny();

    const text = content as string;
    const sha256 = createHash('sha256').update(text).digest('hex');
    const identity = externalKey ? `key:${externalKey}` : `title:${title}`;
    const now = this.clock.now();
    const docs = new KnowledgeDocumentRepository(this.db, actor.workspaceId);
    const existing = await docs.findByIdentity(base.id, identity);
    const common = { title: title!, external_key: externalKey ?? null, content_type: contentType, metadata: JSON.stringify(metadata) };

    if (existing && existing.sha256 === sha256 && existing.status !== 'failed') {
      const changed =
        existing.title !== common.title || existing.content_type !== common.content_type || existing.metadata !== common.metadata;
      if (!changed) return { document: existing, outcome: 'unchanged' };
      await docs.update(existing.id, { ...common, updated_at: now });
      return { document: { ...existing, ...common, updated_at: now }, outcome: 'unchanged' };
    }

    const pieces = chunkDocument(text, { size: base.chunk_size, overlap: base.chunk_overlap, markdown: contentType === 'text/markdown' });
    const result = await this.db.transaction().execute(async (trx) => {
      const scopedDocs = docs.withTransaction(trx);
      const chunks = new KnowledgeChunkRepository(trx, actor.workspaceId);
      const pending = {
        ...common,
        status: 'pending' as const,
        error: null,
        bytes: Buffer.byteLength(text),
        sha256,
        attempts: 0,
        next_attempt_at: null,
        lease_owner: null,
        lease_expires_at: null,
        updated_at: now,
      };
      let document: KnowledgeDocumentRow;
      if (existing) {
        // A newer version: staged chunks of an earlier pending version are dropped, and the lease
        // is cleared so the version in flight cannot swap in (embedding-jobs checks both).
        document = { ...existing, ...pending, version: existing.version + 1 };
        await scopedDocs.update(existing.id, { ...pending, version: document.version });
        await chunks.deleteStaged(existing.id);
      } else {
        document = {
          id: newId(),
          workspace_id: actor.workspaceId,
          knowledge_base_id: base.id,
          identity,
          chunk_count: 0,
          version: 1,
          created_at: now,
          ...pending,
        };
        await scopedDocs.insert(document);
        await new KnowledgeBaseRepository(trx, actor.workspaceId).addCounts(base.id, 1, 0, now);
      }
      const staged = await chunks.insert(stagedChunks(base, document, pieces, now));
      return { document, staged, outcome: (existing ? 'replaced' : 'created') as IngestOutcome };
    });
    this.handoff?.put(result.document.id, result.document.version, result.staged);
    this.onWork();
    return { document: result.document, outcome: result.outcome };
  }

  /** Deletes a document: its live chunks leave the search indexes in the same transaction. */
  async remove(actor: Actor, baseId: string, id: string): Promise<void> {
    const base = await this.bases.get(actor, baseId);
    const document = await this.get(actor, baseId, id);
    await this.db.transaction().execute(async (trx) => {
      const chunks = new KnowledgeChunkRepository(trx, actor.workspaceId);
      const live = (await chunks.live(document.id)).map((row) => Number(row.seq));
      await this.indexes.remove(trx, base.id, base.index_dimensions, live);
      await trx
        .deleteFrom('knowledge_chunks')
        .where('workspace_id', '=', actor.workspaceId)
        .where('document_id', '=', document.id)
        .execute();
      await new KnowledgeDocumentRepository(trx, actor.workspaceId).delete(document.id);
      await new KnowledgeBaseRepository(trx, actor.workspaceId).addCounts(base.id, -1, -live.length, this.clock.now());
    });
    this.handoff?.forget(document.id);
  }
}

function stagedChunks(
  base: KnowledgeBaseRow,
  document: KnowledgeDocumentRow,
  pieces: ReturnType<typeof chunkDocument>,
  now: string,
): NewChunk[] {
  return pieces.map((piece, position) => ({
    id: newId(),
    workspace_id: base.workspace_id,
    knowledge_base_id: base.id,
    document_id: document.id,
    document_version: document.version,
    position,
    heading_path: JSON.stringify(piece.headingPath),
    text: piece.text,
    tokens: piece.tokens,
    live: false,
    embedding: null,
    embedding_key: null,
    next_embedding: null,
    next_embedding_key: null,
    created_at: now,
  }));
}
