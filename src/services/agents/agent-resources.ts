import type { Kysely } from 'kysely';
import { chat } from '../../ai/chat-client.js';
import type { ConnectionResolver } from '../../ai/connection-resolver.js';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../errors/app-error.js';
import type { Clock } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import { isPlainObject } from '../../lib/json.js';
import { promptContext } from '../../memory/prompt-context.js';
import { appendMessages } from '../../memory/session-messages.js';
import type { AgentResources, KnowledgeHit } from '../../steps/agent/agent-resources.js';
import { MemoryRepository } from '../../store/memory-repository.js';
import { StoreRepository } from '../../store/store-repository.js';
import { StoreRowRepository, type StoreRowRecord } from '../../store/store-row-repository.js';
import type { KnowledgeBaseService } from '../knowledge/knowledge-base-service.js';
import { inferSchema } from './infer-schema.js';

export interface AgentResourceOptions {
  db: Kysely<Database>;
  clock: Clock;
  resolver: ConnectionResolver;
  knowledgeBases: KnowledgeBaseService;
  httpAllow: readonly string[];
  /** Wakes the background loop (a summarize compaction became due). */
  poke: () => void;
}

const STORE_COLUMNS = ['key', 'row', 'created_at', 'updated_at', 'workflow_id', 'execution_id'] as const;

const rowAttributes = (row: Partial<StoreRowRecord>) => ({
  key: row.key,
  row: JSON.parse(row.row!) as unknown,
  created_at: row.created_at,
  updated_at: row.updated_at,
  workflow_id: row.workflow_id,
  execution_id: row.execution_id,
});

/**
 * The agent step's view of a workspace, over the services and repositories: each read is
 * scoped by the execution's workspace, so an id of another workspace is "not found" exactly
 * like an unknown one. Store reads use the repositories' read path only.
 */
export function createAgentResources(options: AgentResourceOptions): AgentResources {
  const { db } = options;
  const findMemory = async (workspaceId: string, memoryId: string, repo = new MemoryRepository(db, workspaceId)) => {
    const memory = isUuid(memoryId) ? await repo.find(memoryId) : undefined;
    if (!memory) throw new Error(`memory ${memoryId} does not exist in this workspace`);
    return memory;
  };
  return {
    async chat(workspaceId, connectionId, request, signal) {
      const connection = await options.resolver.resolve(workspaceId, connectionId);
      const answer = await chat(connection, request, { httpAllow: options.httpAllow, signal, nowMs: () => options.clock.nowMs() });
      return Object.assign(answer, { provider: connection.provider });
    },

    async searchKnowledge(workspaceId, knowledgeBaseIds, query, topK) {
      const hits: KnowledgeHit[] = [];
      for (const id of knowledgeBaseIds) {
        try {
          const results = await options.knowledgeBases.searchBase({ workspaceId, userId: '' }, id, { query, top_k: topK });
          for (const r of results)
            hits.push({
              knowledge_base_id: id,
              document_id: r.document_id,
              title: r.title,
              heading_path: r.heading_path,
              text: r.text,
              score: r.score,
            });
        } catch (error) {
          if (error instanceof AppError && error.code === 'not_found')
            throw new Error(`knowledge base ${id} does not exist in this workspace`);
          throw error;
        }
      }
      return hits.sort((a, b) => b.score - a.score).slice(0, topK);
    },

    async readStore(workspaceId, storeId, request) {
      const store = isUuid(storeId) ? await new StoreRepository(db, workspaceId).find(storeId) : undefined;
      if (!store) throw new Error(`store ${storeId} does not exist in this workspace`);
      const rows = new StoreRowRepository(db, store);
      if (request.key !== undefined) {
        const row = await rows.find(request.key);
        return row ? rowAttributes(row) : null;
      }
      const page = await rows.feed({ after: { at: '', key: '' }, limit: request.limit ?? 20, columns: STORE_COLUMNS });
      return { rows: page.map(rowAttributes) };
    },

    async memoryContext(workspaceId, memoryId, sessionKey, query) {
      const memory = await findMemory(workspaceId, memoryId);
      const context = await promptContext(db, memory, sessionKey, query);
      return { summary: context.summary, messages: context.messages, recalled: context.recalled };
    },

    async appendMemory(trx, workspaceId, memoryId, sessionKey, messages) {
      const memory = await findMemory(workspaceId, memoryId, new MemoryRepository(trx, workspaceId));
      const appended = await appendMessages(trx, options.clock, memory, sessionKey, messages);
      // The background loop looks again after the commit; a poke now only makes it sooner.
      if (appended.compactionDue) setTimeout(options.poke, 50).unref?.();
    },

    async workflowInputSchema(workspaceId, workflowId) {
      if (!isUuid(workflowId)) return null;
      const capture = await db
        .selectFrom('webhooks')
        .select('capture_payload')
        .where('workspace_id', '=', workspaceId)
        .where('workflow_id', '=', workflowId)
        .where('capture_payload', 'is not', null)
        .orderBy('captured_at', 'desc')
        .executeTakeFirst();
      if (!capture?.capture_payload) return null;
      const payload = JSON.parse(capture.capture_payload) as unknown;
      const body = isPlainObject(payload) ? payload.body : undefined;
      return isPlainObject(body) ? inferSchema(body) : null;
    },
  };
}
