import { escapePointerToken } from '../../lib/json-pointer.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { notFound } from '../../errors/app-error.js';
import type { Clock } from '../../lib/clock.js';
import { isUuid, newId } from '../../lib/ids.js';
import { isPlainObject } from '../../lib/json.js';
import { BUILTIN_EMBEDDER, embedderKey, type EmbedderSpec } from '../../ai/embedder.js';
import { ConnectionRepository } from '../../store/connection-repository.js';
import { KnowledgeBaseRepository, type KnowledgeBaseRow } from '../../store/knowledge-base-repository.js';
import { KnowledgeChunkRepository } from '../../store/knowledge-chunk-repository.js';
import { searchKnowledge, SEARCH_MODES, type SearchContext, type SearchMode, type SearchResult } from '../../knowledge/search-knowledge.js';
import { METADATA_KEY, type MetadataFilter } from '../../knowledge/search-indexes.js';
import { readString, rejectUnknown, Violations, type AttributeInput } from '../attribute-input.js';
import { providerFailure } from '../provider-failure.js';
import type { Actor } from '../workflows/workflow-service.js';

export const DEFAULT_CHUNK_SIZE = 512;
export const DEFAULT_CHUNK_OVERLAP = 64;
export const MAX_TOP_K = 50;
const ATTRIBUTES = ['name', 'description', 'embedder', 'chunk_size', 'chunk_overlap'] as const;

/**
 * Knowledge bases: CRUD, the embedder and chunking settings, and search. Changing the embedder
 * of a base with live chunks starts a background re-embedding (status `reembedding`); search
 * keeps using the old vectors until the new ones swap in. Chunk size and overlap apply to
 * documents ingested afterwards.
 */
export class KnowledgeBaseService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly search: Omit<SearchContext, 'db'>,
    private readonly onWork: () => void,
  ) {}

  private bases(actor: Actor): KnowledgeBaseRepository {
    return new KnowledgeBaseRepository(this.db, actor.workspaceId);
  }

  async get(actor: Actor, id: string): Promise<KnowledgeBaseRow> {
    const row = isUuid(id) ? await this.bases(actor).find(id) : undefined;
    if (!row) throw notFound('knowledge base');
    return row;
  }

  private async readEmbedder(actor: Actor, input: AttributeInput, violations: Violations): Promise<EmbedderSpec | undefined> {
    const value = input.values.embedder;
    if (value === undefined) return undefined;
    const pointer = input.pointer('embedder');
    if (value === null || (isPlainObject(value) && value.kind === 'builtin' && Object.keys(value).length === 1)) return BUILTIN_EMBEDDER;
    if (!isPlainObject(value) || Object.keys(value).some((key) => key !== 'connection_id' && key !== 'model')) {
      violations.add(pointer, 'embedder must be {"kind": "builtin"} or {"connection_id": <connection id>, "model": <embedding model>}');
      return undefined;
    }
    if (typeof value.model !== 'string' || value.model.trim() === '' || value.model.length > 200)
      violations.add(`${pointer}/model`, 'embedder.model must be the name of an embedding model (at most 200 characters)');
    if (!isUuid(value.connection_id)) {
      violations.add(`${pointer}/connection_id`, 'embedder.connection_id must be a connection id');
      return undefined;
    }
    const connection = await new ConnectionRepository(this.db, actor.workspaceId).find(value.connection_id);
    if (!connection) violations.add(`${pointer}/connection_id`, 'embedder.connection_id names no connection of this workspace');
    else if (connection.provider === 'anthropic')
      violations.add(`${pointer}/connection_id`, 'anthropic has no embeddings endpoint: use an openai or openai_compatible connection');
    return typeof value.model === 'string' ? { connection_id: value.connection_id, model: value.model.trim() } : undefined;
  }

  private readChunking(
    input: AttributeInput,
    violations: Violations,
    current: { size: number; overlap: number },
  ): { size: number; overlap: number } {
    const read = (name: 'chunk_size' | 'chunk_overlap', min: number, max: number, fallback: number) => {
      const value = input.values[name];
      if (value === undefined) return fallback;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
        violations.add(input.pointer(name), `${name} must be a whole number of tokens from ${min} to ${max}`);
        return fallback;
      }
      return value;
    };
    const size = read('chunk_size', 32, 8192, current.size);
    const overlap = read('chunk_overlap', 0, 4096, current.overlap);
    if (overlap * 2 > size)
      violations.add(
        input.pointer(input.values.chunk_overlap !== undefined ? 'chunk_overlap' : 'chunk_size'),
        'chunk_overlap must be at most half of chunk_size',
      );
    return { size, overlap };
  }

  async create(actor: Actor, input: AttributeInput): Promise<KnowledgeBaseRow> {
    const violations = new Violations();
    rejectUnknown(input, ATTRIBUTES, violations, (name) => `${name} is not a knowledge base attribute (${ATTRIBUTES.join(', ')})`);
    const name = readString(input, 'name', violations, { required: true, max: 200 });
    const description = readString(input, 'description', violations, { max: 10_000, nullable: true });
    const embedder = (await this.readEmbedder(actor, input, violations)) ?? BUILTIN_EMBEDDER;
    const chunking = this.readChunking(input, violations, { size: DEFAULT_CHUNK_SIZE, overlap: DEFAULT_CHUNK_OVERLAP });
    violations.throwIfAny();
    const now = this.clock.now();
    const row: KnowledgeBaseRow = {
      id: newId(),
      workspace_id: actor.workspaceId,
      name: name!,
      description: description ?? null,
      embedder: JSON.stringify(embedder),
      embedder_key: embedderKey(embedder),
      index_embedder: null,
      index_embedder_key: null,
      index_dimensions: null,
      index_version: 0,
      embedder_status: 'ready',
      embedder_error: null,
      chunk_size: chunking.size,
      chunk_overlap: chunking.overlap,
      document_count: 0,
      chunk_count: 0,
      lease_owner: null,
      lease_expires_at: null,
      next_attempt_at: null,
      attempts: 0,
      created_at: now,
      updated_at: now,
    };
    await this.bases(actor).insert(row);
    return row;
  }

  async update(actor: Actor, id: string, input: AttributeInput): Promise<KnowledgeBaseRow> {
    const current = await this.get(actor, id);
    const violations = new Violations();
    rejectUnknown(input, ATTRIBUTES, violations, (name) => `${name} is not a knowledge base attribute (${ATTRIBUTES.join(', ')})`);
    const name = readString(input, 'name', violations, { max: 200 });
    if (name === '') violations.add(input.pointer('name'), 'name must not be empty');
    const description = readString(input, 'description', violations, { max: 10_000, nullable: true });
    const embedder = await this.readEmbedder(actor, input, violations);
    const chunking = this.readChunking(input, violations, { size: current.chunk_size, overlap: current.chunk_overlap });
    violations.throwIfAny();
    const now = this.clock.now();
    const changes: Partial<KnowledgeBaseRow> = { updated_at: now, chunk_size: chunking.size, chunk_overlap: chunking.overlap };
    if (name) changes.name = name;
    if (description !== undefined) changes.description = description;
    if (embedder && embedderKey(embedder) !== current.embedder_key) {
      changes.embedder = JSON.stringify(embedder);
      changes.embedder_key = embedderKey(embedder);
      changes.embedder_error = null;
      changes.attempts = 0;
      changes.next_attempt_at = null;
      const live =
        current.index_embedder_key !== null && (await new KnowledgeChunkRepository(this.db, actor.workspaceId).liveOfBase(id)).length > 0;
      if (!live || changes.embedder_key === current.index_embedder_key) {
        // Nothing to re-embed (or back to the embedder of the live vectors): no background work.
        changes.embedder_status = 'ready';
        if (!live) Object.assign(changes, { index_embedder: null, index_embedder_key: null, index_dimensions: null });
      } else {
        changes.embedder_status = 'reembedding';
      }
    }
    await this.bases(actor).update(id, changes);
    if (changes.embedder) this.onWork();
    return { ...current, ...changes };
  }

  /** Deletes the base with its documents and chunks, taking the chunks out of the search indexes first. */
  async remove(actor: Actor, id: string): Promise<void> {
    const base = await this.get(actor, id);
    await this.db.transaction().execute(async (trx) => {
      const chunks = new KnowledgeChunkRepository(trx, actor.workspaceId);
      const live = (await chunks.liveOfBase(id)).map((row) => Number(row.seq));
      await this.search.indexes.remove(trx, id, base.index_dimensions, live);
      await this.search.indexes.dropBase(trx, id);
      await trx.deleteFrom('knowledge_chunks').where('workspace_id', '=', actor.workspaceId).where('knowledge_base_id', '=', id).execute();
      await trx
        .deleteFrom('knowledge_documents')
        .where('workspace_id', '=', actor.workspaceId)
        .where('knowledge_base_id', '=', id)
        .execute();
      await this.bases(actor).withTransaction(trx).delete(id);
    });
  }

  /** `POST /knowledge-bases/:id/search`: `{query, top_k, mode, filter}`. */
  async searchBase(actor: Actor, id: string, data: Record<string, unknown>): Promise<SearchResult[]> {
    const base = await this.get(actor, id);
    const violations = new Violations();
    for (const key of Object.keys(data))
      if (!['query', 'top_k', 'mode', 'filter'].includes(key))
        violations.add(`/data/${escapePointerToken(key)}`, `${key} is not a search argument (query, top_k, mode, filter)`);
    const query = data.query;
    if (typeof query !== 'string' || query.trim() === '' || query.length > 4000)
      violations.add('/data/query', 'query must be a non-empty string of at most 4000 characters');
    const topK = data.top_k ?? 5;
    if (typeof topK !== 'number' || !Number.isInteger(topK) || topK < 1 || topK > MAX_TOP_K)
      violations.add('/data/top_k', `top_k must be a whole number from 1 to ${MAX_TOP_K}`);
    const mode = data.mode ?? 'hybrid';
    if (!SEARCH_MODES.includes(mode as SearchMode)) violations.add('/data/mode', `mode must be one of ${SEARCH_MODES.join(', ')}`);
    const filter = readFilter(data.filter, violations);
    violations.throwIfAny();
    try {
      return await searchKnowledge({ db: this.db, ...this.search }, base, {
        query: query as string,
        topK: topK as number,
        mode: mode as SearchMode,
        filter,
      });
    } catch (error) {
      throw providerFailure(error);
    }
  }
}

function readFilter(value: unknown, violations: Violations): MetadataFilter | null {
  if (value === undefined || value === null) return null;
  if (!isPlainObject(value)) {
    violations.add('/data/filter', 'filter must be an object of metadata keys and the values they must equal');
    return null;
  }
  const filter: MetadataFilter = {};
  for (const [key, item] of Object.entries(value)) {
    if (!METADATA_KEY.test(key))
      violations.add(`/data/filter/${escapePointerToken(key)}`, 'filter keys are metadata keys: letters, digits, _ . - (at most 64)');
    else if (item !== null && !['string', 'number', 'boolean'].includes(typeof item))
      violations.add(`/data/filter/${escapePointerToken(key)}`, 'a filter value must be a string, number, boolean or null (equality)');
    else filter[key] = item as string | number | boolean | null;
  }
  if (Object.keys(filter).length > 16) violations.add('/data/filter', 'filter takes at most 16 keys');
  return Object.keys(filter).length > 0 ? filter : null;
}
