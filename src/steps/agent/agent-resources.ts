import type { Transaction } from 'kysely';
import type { ChatRequest, ChatResponse } from '../../ai/chat-types.js';
import type { Database } from '../../db/schema.js';

/** A message of a memory session as the agent puts it into a prompt. */
export interface MemoryMessage {
  role: string;
  content: string;
}

/** What a session contributes to a prompt (memory/prompt-context.ts). */
export interface AgentMemoryContext {
  summary: string | null;
  messages: MemoryMessage[];
  recalled: MemoryMessage[];
}

/** One knowledge search hit as the `knowledge_search` tool answers it. */
export interface KnowledgeHit {
  knowledge_base_id: string;
  document_id: string;
  title: string;
  heading_path: string[];
  text: string;
  score: number;
}

/**
 * What the agent step reads from its workspace, and nothing more: the engine hands it to the
 * runtime and the composition root builds it over the services (services/agents). Every
 * method takes the execution's workspace; an id of another workspace is "not found".
 * Failures of the model call are ProviderErrors; the rest throw plain Errors whose message the
 * model may read (a tool error) or the step records.
 */
export interface AgentResources {
  /** One model turn through a connection; `provider` is the connection's. */
  chat(
    workspaceId: string,
    connectionId: string,
    request: ChatRequest,
    signal: AbortSignal | undefined,
  ): Promise<ChatResponse & { provider: string }>;
  /** Hybrid search over the bases, best first across them. */
  searchKnowledge(workspaceId: string, knowledgeBaseIds: string[], query: string, topK: number): Promise<KnowledgeHit[]>;
  /** One row by key (null when absent), or the first `limit` rows (newest changes last). */
  readStore(workspaceId: string, storeId: string, request: { key?: string; limit?: number }): Promise<unknown>;
  /** The session's window, summary and recalled messages; an unknown memory is an Error. */
  memoryContext(workspaceId: string, memoryId: string, sessionKey: string, query: string): Promise<AgentMemoryContext>;
  /** Appends messages to the session inside the transaction that completes the step. */
  appendMemory(
    trx: Transaction<Database>,
    workspaceId: string,
    memoryId: string,
    sessionKey: string,
    messages: { role: 'user' | 'assistant'; content: string }[],
  ): Promise<void>;
  /** The JSON Schema of a workflow's input, inferred from its trigger's captured sample; null without one. */
  workflowInputSchema(workspaceId: string, workflowId: string): Promise<Record<string, unknown> | null>;
}
