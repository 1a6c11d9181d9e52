import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { SqlDialect } from '../db/dialect/dialect.js';
import type { FolderService } from '../services/folders/folder-service.js';
import type { WorkflowService } from '../services/workflows/workflow-service.js';

/** What the routes get from the composition root; passed explicitly, no container. */
export interface ApiContext {
  db: Kysely<Database>;
  dialect: SqlDialect;
  baseUrl: string;
  workflows: WorkflowService;
  folders: FolderService;
}

export function apiUrl(ctx: ApiContext, path: string): string {
  return `${ctx.baseUrl}/api/v1${path}`;
}
