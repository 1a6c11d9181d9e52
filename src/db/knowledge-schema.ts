import type { Generated } from 'kysely';
import type { Bool } from './column-types.js';

/** Tables of connections, knowledge bases and memories (migrations 0007-0008, 0013); registered in schema.ts's Database. */
export const CONNECTION_PROVIDERS = ['openai', 'anthropic', 'openai_compatible'] as const;
export type ConnectionProvider = (typeof CONNECTION_PROVIDERS)[number];

/** Credentials for a model provider; `api_key_sealed` is the key sealed with the secret key (lib/secret-box.ts), never returned. */
export interface ConnectionsTable {
  id: string;
  workspace_id: string;
  provider: ConnectionProvider;
  name: string;
  base_url: string | null;
  api_key_sealed: string | null;
  /** What the API shows of the key: whether one is set. */
  has_api_key: Bool;
  created_at: string;
  updated_at: string;
}

export const EMBEDDER_STATUSES = ['ready', 'reembedding', 'failed'] as const;
export type EmbedderStatus = (typeof EMBEDDER_STATUSES)[number];

/**
 * A knowledge base. `embedder` is what new vectors are made with; `index_embedder` what the
 * searchable (live) vectors were made with. They differ while a changed embedder re-embeds
 * every chunk in the background; search embeds queries with `index_embedder` until the swap.
 */
export interface KnowledgeBasesTable {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  /** JSON text: `{"kind":"builtin"}` or `{"connection_id","model"}`. */
  embedder: string;
  /** A stable key of `embedder` (`builtin:v1`, `connection:<id>:<model>`). */
  embedder_key: string;
  /** JSON text of the embedder of the live vectors; null while nothing is indexed. */
  index_embedder: string | null;
  index_embedder_key: string | null;
  index_dimensions: number | null;
  /** Raised with every change to the searchable vectors (the exact index's freshness check; migration 0011). */
  index_version: number;
  embedder_status: EmbedderStatus;
  embedder_error: string | null;
  chunk_size: number;
  chunk_overlap: number;
  document_count: number;
  chunk_count: number;
  /** Background re-embedding: who holds it, until when, and when it may be tried again. */
  lease_owner: string | null;
  lease_expires_at: string | null;
  next_attempt_at: string | null;
  attempts: number;
  created_at: string;
  updated_at: string;
}

export const DOCUMENT_STATUSES = ['pending', 'ready', 'failed'] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

/**
 * A document of a knowledge base. `status` is that of its latest content: `pending` until
 * that content's chunks are embedded and swapped in (the previous version's chunks keep
 * answering searches meanwhile), `ready`, or `failed` with `error`.
 */
export interface KnowledgeDocumentsTable {
  id: string;
  workspace_id: string;
  knowledge_base_id: string;
  title: string;
  external_key: string | null;
  /** `external_key`, or the title when there is none: unique per base, what a re-send matches. */
  identity: string;
  content_type: string;
  status: DocumentStatus;
  /** JSON text `{code, message}` of the last failure. */
  error: string | null;
  /** Live chunks (searchable). */
  chunk_count: number;
  bytes: number;
  sha256: string;
  /** JSON text: an object of caller metadata, matched by the search filter. */
  metadata: string;
  /** Bumped by every content change; staged chunks carry the version they belong to. */
  version: number;
  lease_owner: string | null;
  lease_expires_at: string | null;
  next_attempt_at: string | null;
  attempts: number;
  created_at: string;
  updated_at: string;
}

/** A vector as stored: float32 little-endian bytes on SQLite, `real[]` on PostgreSQL. */
export type StoredVector = Buffer | Uint8Array | number[];

/**
 * A chunk of a document. `seq` is an integer key for the search indexes (FTS5 and sqlite-vec
 * rowids). `live` chunks are searchable; staged ones (a pending version) are not, until the
 * swap flips them in one transaction with the removal of the previous version's.
 */
export interface KnowledgeChunksTable {
  seq: Generated<number>;
  id: string;
  workspace_id: string;
  knowledge_base_id: string;
  document_id: string;
  document_version: number;
  position: number;
  /** JSON text: array of headings. */
  heading_path: string;
  text: string;
  tokens: number;
  live: Bool;
  /** The vector in the space of `embedding_key` (for a live chunk: the base's index embedder). */
  embedding: StoredVector | null;
  embedding_key: string | null;
  /** A live chunk's vector for a new embedder, staged while the base re-embeds. */
  next_embedding: StoredVector | null;
  next_embedding_key: string | null;
  created_at: string;
}

export const COMPACTION_MODES = ['none', 'truncate', 'summarize'] as const;
export type CompactionMode = (typeof COMPACTION_MODES)[number];
export const RECALL_MODES = ['none', 'semantic'] as const;
export type RecallMode = (typeof RECALL_MODES)[number];

export interface MemoriesTable {
  id: string;
  workspace_id: string;
  name: string;
  window: number;
  /** JSON text `{mode, threshold_tokens, connection_id?, model?}`. */
  compaction: string;
  /** JSON text `{mode, top_k}`. */
  recall: string;
  created_at: string;
  updated_at: string;
}

/** One conversation of a memory, keyed by the caller's session key. */
export interface MemorySessionsTable {
  id: string;
  workspace_id: string;
  memory_id: string;
  session_key: string;
  message_count: number;
  /** Tokens of the messages in the prompt window (summary included). */
  window_tokens: number;
  compaction_count: number;
  last_compacted_at: string | null;
  /** JSON text `{mode, messages, tokens_before, tokens_after, at}` of the last compaction. */
  last_compaction: string | null;
  /** A summarize compaction is due (it needs a model call, so it runs after the append commits). */
  compaction_due: Bool;
  lease_owner: string | null;
  lease_expires_at: string | null;
  next_attempt_at: string | null;
  attempts: number;
  /** JSON text `{code, message}` of the last failed compaction. */
  compaction_error: string | null;
  created_at: string;
  updated_at: string;
}

export const MESSAGE_ROLES = ['user', 'assistant', 'system', 'tool', 'summary'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

export interface MemoryMessagesTable {
  id: string;
  workspace_id: string;
  memory_id: string;
  session_id: string;
  /** Order within the session, from 1. */
  position: number;
  role: MessageRole;
  content: string;
  tokens: number;
  /** Still in the prompt window; compaction moves older messages out (they stay stored). */
  in_window: Bool;
  /** The built-in embedder's vector, for semantic recall. */
  embedding: StoredVector | null;
  created_at: string;
}
