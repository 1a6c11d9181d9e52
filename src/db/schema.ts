import type { AppInstallationsTable, BotThreadsTable, PlatformEventsTable, ProviderAppsTable } from './platform-schema.js';
import type {
  ConnectionsTable,
  KnowledgeBasesTable,
  KnowledgeDocumentsTable,
  KnowledgeChunksTable,
  MemoriesTable,
  MemorySessionsTable,
  MemoryMessagesTable,
} from './knowledge-schema.js';
export {
  CONNECTION_PROVIDERS,
  EMBEDDER_STATUSES,
  DOCUMENT_STATUSES,
  COMPACTION_MODES,
  RECALL_MODES,
  MESSAGE_ROLES,
  type ConnectionProvider,
  type ConnectionsTable,
  type EmbedderStatus,
  type KnowledgeBasesTable,
  type DocumentStatus,
  type KnowledgeDocumentsTable,
  type StoredVector,
  type KnowledgeChunksTable,
  type CompactionMode,
  type RecallMode,
  type MemoriesTable,
  type MemorySessionsTable,
  type MessageRole,
  type MemoryMessagesTable,
} from './knowledge-schema.js';
export {
  APP_PROVIDERS,
  type AppProvider,
  type AppInstallationsTable,
  type BotThreadsTable,
  type PlatformEventsTable,
  type ProviderAppsTable,
} from './platform-schema.js';

/**
 * Terminology and storage conventions (both dialects):
 * - ids are UUID v7 strings; timestamps are canonical RFC 3339 UTC text with microseconds
 *   (see lib/clock.ts), so ordering and comparisons behave the same on SQLite and PostgreSQL;
 * - JSON values (graphs, configs) are stored as JSON text;
 * - booleans are `boolean` on PostgreSQL and 0/1 on SQLite: repositories read them with
 *   `Boolean(value)` and the dialect encodes them on write (see db/dialect).
 * Column names match the API attribute names, so no mapping layer sits between them.
 */
export type { Bool } from './column-types.js';
import type { Bool } from './column-types.js';

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
  /** The workflow started when an execution of this one fails (migration 0025). */
  error_workflow_id: string | null;
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

export {
  EXECUTION_STATUSES,
  STEP_STATUSES,
  ERROR_WORKFLOW_SKIPPED,
  type ExecutionStatus,
  type StepStatus,
  type ErrorWorkflowSkipped,
  type ExecutionsTable,
  type ApprovalDecisionsTable,
  type ExecutionStepsTable,
} from './execution-schema.js';
import type { ApprovalDecisionsTable, ExecutionsTable, ExecutionStepsTable } from './execution-schema.js';

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
  approval_decisions: ApprovalDecisionsTable;
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
