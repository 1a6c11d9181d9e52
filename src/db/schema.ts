import type { Generated } from 'kysely';
import type { AppInstallationsTable, BotThreadsTable, PlatformEventsTable, ProviderAppsTable } from './platform-schema.js';

export { APP_PROVIDERS, type AppProvider, type AppInstallationsTable, type BotThreadsTable, type PlatformEventsTable, type ProviderAppsTable } from './platform-schema.js';

/**
 * Terminology and storage conventions (both dialects):
 * - ids are UUID v7 strings; timestamps are canonical RFC 3339 UTC text with microseconds
 *   (see lib/clock.ts), so ordering and comparisons behave the same on SQLite and PostgreSQL;
 * - JSON values (graphs, configs) are stored as JSON text;
 * - booleans are `boolean` on PostgreSQL and 0/1 on SQLite: repositories read them with
 *   `Boolean(value)` and the dialect encodes them on write (see db/dialect).
 * Column names match the API attribute names, so no mapping layer sits between them.
 */
export type Bool = boolean | number;

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export const WORKSPACE_PLANS = ['free', 'pro'] as const;
export type WorkspacePlan = (typeof WORKSPACE_PLANS)[number];

export interface WorkspacesTable {
  id: string;
  name: string;
  slug: string;
  plan: WorkspacePlan;
  owner_user_id: string;
  created_at: string;
  updated_at: string;
}

export const TOKEN_SCOPES = ['read', 'build'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

export interface ApiTokensTable {
  id: string;
  workspace_id: string;
  user_id: string;
  name: string;
  /** The non-secret leading part of the token (`sy_` + 8 characters), for look-up and display. */
  token_prefix: string;
  /** SHA-256 of the whole token; the token itself is never stored. */
  token_hash: string;
  scope: TokenScope;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

export interface WorkflowFoldersTable {
  id: string;
  workspace_id: string;
  parent_id: string | null;
  name: string;
  position: number;
  created_at: string;
  updated_at: string;
}

export const WORKFLOW_STATUSES = ['inactive', 'active'] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];
export const BUILD_MODES = ['guided', 'advanced'] as const;
export type BuildMode = (typeof BUILD_MODES)[number];

export interface WorkflowsTable {
  id: string;
  workspace_id: string;
  user_id: string;
  folder_id: string | null;
  position: number;
  name: string;
  description: string | null;
  status: WorkflowStatus;
  ai_auto_probe: Bool;
  build_mode: BuildMode;
  build_prompt: string | null;
  /** JSON text of `{nodes, edges}`: the live canvas. */
  graph: string;
  /** The snapshot an active workflow runs; kept (not cleared) on deactivation for audit. */
  active_snapshot_id: string | null;
  /** Portable name, unique per workspace, kept across export and import (migration 0009). */
  export_key: string;
  created_at: string;
  updated_at: string;
}

export interface WorkflowSnapshotsTable {
  id: string;
  workspace_id: string;
  workflow_id: string;
  graph: string;
  created_by: string | null;
  created_at: string;
  /** True for the frozen canvas of a draft run; false for an activation snapshot. */
  draft: Bool;
}

export interface StepTemplatesTable {
  /** The slug: a template's id is its slug. */
  id: string;
  slug: string;
  name: string;
  /** JSON text: array of categories. */
  category: string;
  icon: string;
  icon_color: string;
  canvas_schema: string | null;
  canvas_visible: Bool | null;
  default_config: string | null;
  description: string | null;
  docs: string | null;
  /** JSON Schema of the output, as JSON text (the spec types it as a string). */
  output_schema: string | null;
  ports: string | null;
  sort_order: number | null;
}

export const EXECUTION_STATUSES = ['pending', 'running', 'waiting', 'completed', 'failed', 'cancelled'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];
export const STEP_STATUSES = ['pending', 'running', 'completed', 'failed', 'skipped', 'waiting'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export interface ExecutionsTable {
  id: string;
  workspace_id: string;
  workflow_id: string;
  workflow_snapshot_id: string;
  status: ExecutionStatus;
  /** The parent's execution-step row that started this execution (call_workflow). */
  triggered_by_step_id: string | null;
  parent_execution_id: string | null;
  /** 0 for a top-level run; a child is its parent's depth + 1 (runaway recursion is refused). */
  call_depth: number;
  retry_of_execution_id: string | null;
  user_id: string | null;
  started_at: string | null;
  finished_at: string | null;
  inserted_at: string;
  updated_at: string;
  /** JSON text: engine state needed to resume (node outputs so far). */
  context: string | null;
  /** JSON text: the trigger payload {method, headers, query, body}. */
  inputs: string | null;
  output: string | null;
  error: string | null;
  step_count: number | null;
  /** When a pending or waiting execution is next due. */
  run_at: string | null;
  lease_owner: string | null;
  lease_expires_at: string | null;
  /** JSON text: what a respond_to_webhook step answered {status, headers, body}. */
  response: string | null;
  /** The snapshot's per-workflow concurrency limit (null: none), for claims across processes. */
  concurrency_limit: number | null;
  /** The process waiting for this execution's answer (a synchronous webhook delivery), if another may run it. */
  waiter: string | null;
}

export interface ExecutionStepsTable {
  id: string;
  workspace_id: string;
  workflow_execution_id: string;
  node_id: string;
  status: StepStatus;
  attempt: number;
  workflow_step_id: string | null;
  awaiting_workflow_execution_id: string | null;
  duration_ms: number | null;
  started_at: string | null;
  finished_at: string | null;
  iter_index: number | null;
  kind: string | null;
  loop_node_id: string | null;
  provider: string | null;
  input: string | null;
  output: string | null;
  error: string | null;
  /** JSON text: console lines a code step printed. */
  logs: string | null;
  /** JSON text: the out ports a completed step took (the engine rebuilds edge state from them). */
  ports: string | null;
  memory_bytes: number | null;
  output_bytes: number | null;
  reductions: number | string | null;
  resume_at: string | null;
  inserted_at: string;
  updated_at: string;
}

export const WEBHOOK_VERIFICATIONS = ['bearer', 'hmac', 'none'] as const;
export type WebhookVerificationMethod = (typeof WEBHOOK_VERIFICATIONS)[number];

/** A webhook node's endpoint; `id` is the node's service-assigned `webhook_id`. */
export interface WebhooksTable {
  id: string;
  workspace_id: string;
  workflow_id: string;
  node_id: string;
  verification: WebhookVerificationMethod;
  hmac_format: 'github' | 'stripe' | 'plain' | null;
  hmac_header: string | null;
  /** The HMAC secret sealed with the secret key (lib/secret-box.ts); never returned. */
  secret_encrypted: string | null;
  /** SHA-256 hex of the bearer token; the token is shown once. */
  token_hash: string | null;
  max_body_bytes: number;
  /** The next authenticated delivery is recorded, not run. */
  capturing: Bool;
  capture_payload: string | null;
  capture_shape: string | null;
  captured_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The first answer to a delivery with an idempotency key, for 24 hours. */
export interface WebhookDeliveriesTable {
  webhook_id: string;
  idempotency_key: string;
  execution_id: string;
  created_at: string;
}

/**
 * A schedule node of an active workflow's snapshot (migrations 0012, 0015): its timing and its
 * durable next fire time. Exactly one of `cron` (with `timezone`) and `interval_ms` is set.
 */
export interface SchedulesTable {
  id: string;
  workspace_id: string;
  workflow_id: string;
  snapshot_id: string;
  node_id: string;
  cron: string | null;
  timezone: string | null;
  /** Milliseconds, as the node's `interval_ms`; bigint (a year is past int4), so PostgreSQL reads a string. */
  interval_ms: number | string | null;
  catch_up: 'skip' | 'run_once';
  /** Activation time: intervals count from it. */
  anchor_at: string;
  next_fire_at: string;
  last_fired_at: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * Stores: workspace data tables. Terminology:
 * - store: a table of one workspace with a JSON Schema for its rows (`schema`, bumped
 *   `schema_version` on every change) and a row cap;
 * - row: one keyed JSON object of a store (`store_rows`, primary key (store_id, key));
 * - tombstone: the record of a deleted key (`store_deletions`), removed when the key is written
 *   again, so the rows feed and the deletions feed never contradict each other;
 * - last write time (`last_write_at`): the time given to the store's latest row write or delete;
 *   writers hold the store's row lock and take a time strictly after it (store/store-write.ts).
 * - restore: a store made from a dump is invisible while its rows are imported
 *   (`restoring_until`, a lease the restore renews with every batch; null once it finished).
 * A deleted store keeps its row (`deleted_at` set) until the sweeper has removed its rows.
 */
export interface StoresTable {
  id: string;
  workspace_id: string;
  name: string;
  slug: string;
  description: string | null;
  /** JSON text of the row schema (JSON Schema 2020-12, an object schema). */
  schema: string;
  schema_version: number;
  row_count: number;
  row_cap: number;
  last_write_at: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  /** Set while a restore fills the store (invisible until then): the lease's end. */
  restoring_until: string | null;
}

export interface StoreRowsTable {
  store_id: string;
  key: string;
  /** JSON text of the row object. */
  row: string;
  created_at: string;
  updated_at: string;
  /** The workflow and execution of the last write; null for API writes. */
  workflow_id: string | null;
  execution_id: string | null;
}

export interface StoreDeletionsTable {
  store_id: string;
  key: string;
  deleted_at: string;
  workflow_id: string | null;
}

/**
 * A rate-limit counter shared by the processes of one PostgreSQL (migration 0010; no such table
 * on SQLite, where the counters live in memory). `window_ends_at` is a timestamptz, unlike the
 * canonical-text timestamps elsewhere: only the database compares it, with its own clock.
 */
export interface RateLimitsTable {
  key: string;
  hits: number;
  window_ends_at: Date;
}

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

export const WORKFLOW_CALL_SOURCES = ['canvas', 'snapshot'] as const;
export type WorkflowCallSource = (typeof WORKFLOW_CALL_SOURCES)[number];

/** A call_workflow step of a caller's live canvas or active snapshot naming a callee (migration 0009). */
export interface WorkflowCallsTable {
  workspace_id: string;
  caller_id: string;
  source: WorkflowCallSource;
  callee_id: string;
}

export interface Database {
  stores: StoresTable;
  store_rows: StoreRowsTable;
  store_deletions: StoreDeletionsTable;
  connections: ConnectionsTable;
  knowledge_bases: KnowledgeBasesTable;
  knowledge_documents: KnowledgeDocumentsTable;
  knowledge_chunks: KnowledgeChunksTable;
  memories: MemoriesTable;
  memory_sessions: MemorySessionsTable;
  memory_messages: MemoryMessagesTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  schedules: SchedulesTable;
  executions: ExecutionsTable;
  execution_steps: ExecutionStepsTable;
  step_templates: StepTemplatesTable;
  users: UsersTable;
  workspaces: WorkspacesTable;
  api_tokens: ApiTokensTable;
  workflow_folders: WorkflowFoldersTable;
  workflows: WorkflowsTable;
  workflow_snapshots: WorkflowSnapshotsTable;
  workflow_calls: WorkflowCallsTable;
  rate_limits: RateLimitsTable;
  provider_apps: ProviderAppsTable;
  app_installations: AppInstallationsTable;
  platform_events: PlatformEventsTable;
  bot_threads: BotThreadsTable;
}
