import type { WebhookService } from '../services/webhooks/webhook-service.js';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { SqlDialect } from '../db/dialect/dialect.js';
import type { DataStamp } from '../db/data-stamp.js';
import type { FreshCache } from '../lib/fresh-cache.js';
import type { FolderService } from '../services/folders/folder-service.js';
import type { WorkflowService } from '../services/workflows/workflow-service.js';
import type { ExecutionService } from '../services/executions/execution-service.js';
import type { ApprovalService } from '../services/executions/approval-service.js';
import type { StoreService } from '../services/stores/store-service.js';
import type { StoreRowService } from '../services/stores/store-row-service.js';
import type { FeedCursors } from '../services/stores/feed-cursor.js';
import type { ConnectionService } from '../services/connections/connection-service.js';
import type { KnowledgeBaseService } from '../services/knowledge/knowledge-base-service.js';
import type { KnowledgeDocumentService } from '../services/knowledge/knowledge-document-service.js';
import type { MemoryService } from '../services/memories/memory-service.js';
import type { WorkflowImports } from '../services/workflows/workflow-import.js';
import type { WorkflowExports } from '../services/workflows/workflow-export.js';
import type { CallGraphService } from '../services/workflows/call-graph-service.js';
import type { FolderDocuments } from '../services/folders/folder-documents.js';
import type { AppService } from '../services/apps/app-service.js';
import type { SlackOAuth } from '../services/apps/slack-oauth.js';

/** What the routes get from the composition root; passed explicitly, no container. */
export interface ApiContext {
  db: Kysely<Database>;
  dialect: SqlDialect;
  baseUrl: string;
  workflows: WorkflowService;
  folders: FolderService;
  executions: ExecutionService;
  /** Decisions on waiting approval steps (the API route and the signed links). */
  approvals: ApprovalService;
  webhooks: WebhookService;
  stores: StoreService;
  storeRows: StoreRowService;
  /** Signs and checks the cursors of the store feeds. */
  feedCursors: FeedCursors;
  connections: ConnectionService;
  knowledgeBases: KnowledgeBaseService;
  knowledgeDocuments: KnowledgeDocumentService;
  memories: MemoryService;
  /** Workflow documents and the call graph (docs/import.md, docs/calls.md). */
  imports: WorkflowImports;
  exports: WorkflowExports;
  callGraph: CallGraphService;
  folderDocuments: FolderDocuments;
  /** Provider apps and installations (platform triggers, docs/triggers.md). */
  apps: AppService;
  /** The Slack OAuth v2 install (its authorize route and callback). */
  slackOAuth: SlackOAuth;
  /**
   * Serialised list answers by workspace and URL, fresh while the listed tables are unchanged
   * (db/data-stamp.ts); null where the database cannot tell (no stamp).
   */
  listCache: { bodies: FreshCache<Buffer>; stamp: DataStamp } | null;
}

export function apiUrl(ctx: ApiContext, path: string): string {
  return `${ctx.baseUrl}/api/v1${path}`;
}
