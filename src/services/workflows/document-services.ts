import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { FolderDocuments } from '../folders/folder-documents.js';
import { CallGraphService } from './call-graph-service.js';
import { WorkflowExports } from './workflow-export.js';
import { WorkflowImports } from './workflow-import.js';

/** The document and call-graph services, wired once for the composition root (deps.ts). */
export function workflowDocumentServices(
  db: Kysely<Database>,
  clock: Clock,
  webhooks: { secretKey: string; baseUrl: string },
  isUniqueViolation: (error: unknown) => boolean,
) {
  const exports = new WorkflowExports(db, clock);
  const imports = new WorkflowImports(db, clock, webhooks, isUniqueViolation);
  return { imports, exports, callGraph: new CallGraphService(db), folderDocuments: new FolderDocuments(db, clock, exports, imports) };
}
