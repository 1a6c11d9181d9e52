import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, notFound } from '../../errors/app-error.js';
import { isUuid, newId } from '../../lib/ids.js';
import { isPlainObject } from '../../lib/json.js';
import { POSITION_STEP } from '../../lib/positions.js';
import { callsAmong, readFolderDocument, type FolderDocument } from '../../documents/folder-document.js';
import { FOLDER_FORMAT } from '../../documents/read-document.js';
import { FolderRepository, type FolderRow } from '../../store/folder-repository.js';
import { ReferenceLookups } from '../../store/reference-lookups.js';
import type { WorkflowExports } from '../workflows/workflow-export.js';
import type { ImportMeta, WorkflowImports } from '../workflows/workflow-import.js';
import type { Actor } from '../workflows/workflow-service.js';
import { escapePointerToken } from '../../lib/json-pointer.js';

export interface FolderImportMeta {
  folders: Array<{ id: string; name: string; parent_id: string | null }>;
  workflows: Array<{ id: string; name: string; export_key: string; folder_id: string } & ImportMeta>;
}

/**
 * Folder documents (`service-folder/v1`): a folder with its sub-folders and every workflow in
 * them, and the calls among those workflows by export key. Import creates the tree and the
 * workflows in one transaction; calls among them are rewired to the new ids because each
 * workflow's id is chosen before any graph is bound.
 */
export class FolderDocuments {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly exports: WorkflowExports,
    private readonly imports: WorkflowImports,
  ) {}

  async exportFolder(actor: Actor, id: string): Promise<FolderDocument> {
    const folders = new FolderRepository(this.db, actor.workspaceId);
    const folder = isUuid(id) ? await folders.find(id) : undefined;
    if (!folder) throw notFound('folder');
    const children = await folders.selectBase().selectAll().where('parent_id', '=', folder.id).orderBy('position').orderBy('id').execute();
    const documentsIn = async (folderId: string) => {
      const rows = await this.db
        .selectFrom('workflows')
        .selectAll()
        .where('workspace_id', '=', actor.workspaceId)
        .where('folder_id', '=', folderId)
        .orderBy('position')
        .orderBy('id')
        .execute();
      const documents = [];
      for (const row of rows) documents.push(await this.exports.documentOf(actor.workspaceId, row));
      return documents;
    };
    const workflows = await documentsIn(folder.id);
    const subFolders = [];
    for (const child of children) subFolders.push({ name: child.name, workflows: await documentsIn(child.id) });
    return {
      format: FOLDER_FORMAT,
      exported_at: this.clock.now(),
      name: folder.name,
      workflows,
      folders: subFolders,
      calls: callsAmong([...workflows, ...subFolders.flatMap((f) => f.workflows)]),
    };
  }

  async importFolder(actor: Actor, data: Record<string, unknown>): Promise<{ folder: FolderRow; meta: FolderImportMeta }> {
    for (const key of Object.keys(data)) {
      if (!['document', 'parent_id', 'name'].includes(key))
        throw new AppError('validation_failed', `unknown member "${key}": a folder import takes document, parent_id and name`, {
          pointer: `/data/${escapePointerToken(key)}`,
        });
    }
    const parentId = data.parent_id ?? null;
    if (parentId !== null && !isUuid(parentId))
      throw new AppError('validation_failed', 'parent_id must be a folder id or null', { pointer: '/data/parent_id' });
    if (data.name !== undefined && (typeof data.name !== 'string' || data.name.trim() === '' || data.name.length > 200)) {
      throw new AppError('validation_failed', 'name must be a non-empty string of at most 200 characters', { pointer: '/data/name' });
    }
    if (data.document === undefined) throw new AppError('validation_failed', 'document is required', { pointer: '/data/document' });
    const checked = readFolderDocument(data.document, '/data/document');
    const folders = new FolderRepository(this.db, actor.workspaceId);
    if (typeof parentId === 'string') {
      const parent = await folders.find(parentId);
      if (!parent) throw new AppError('validation_failed', 'parent_id names no folder of this workspace', { pointer: '/data/parent_id' });
      if (parent.parent_id !== null)
        throw new AppError('validation_failed', 'folders are one level deep: the parent is itself inside a folder', {
          pointer: '/data/parent_id',
        });
      if (checked.folders.length > 0)
        throw new AppError(
          'validation_failed',
          'folders are one level deep: a document with sub-folders can only be imported at the root',
          { pointer: '/data/parent_id' },
        );
    }
    const now = this.clock.now();
    let tries = 0;
    // Read again on a retry (workflow-import.ts withExportKeyRetry): importing writes into the draft.
    return this.imports.withExportKeyRetry(async () => {
      const draft = tries++ === 0 ? checked : readFolderDocument(data.document, '/data/document');
      return this.db.transaction().execute(async (trx) => {
        const repo = folders.withTransaction(trx);
        const created: FolderRow[] = [];
        const makeFolder = async (name: string, parent: string | null) => {
          const siblings = await repo.listSiblingPositions(parent);
          const row: FolderRow = {
            id: newId(),
            workspace_id: actor.workspaceId,
            parent_id: parent,
            name,
            position: (siblings.at(-1)?.position ?? 0) + POSITION_STEP,
            created_at: now,
            updated_at: now,
          };
          await repo.insert(row);
          created.push(row);
          return row;
        };
        const root = await makeFolder(
          typeof data.name === 'string' ? data.name.trim() : (draft.name ?? 'Imported workflows'),
          parentId as string | null,
        );
        const subFolders = [];
        for (const name of draft.folders) subFolders.push(await makeFolder(name, root.id));

        // Ids and export keys first, so every workflow's calls to the others bind to the new ids.
        const lookups = new ReferenceLookups(trx, actor.workspaceId);
        const siblings = new Map<string, string>();
        const reserved: Array<{ id: string; exportKey: string }> = [];
        const claimed = new Set<string>();
        for (const { draft: workflow } of draft.workflows) {
          const id = newId();
          let exportKey = await this.imports.freeExportKey(lookups, workflow.exportKey);
          if (claimed.has(exportKey)) exportKey = newId();
          claimed.add(exportKey);
          reserved.push({ id, exportKey });
          if (workflow.exportKey !== null && !siblings.has(workflow.exportKey)) siblings.set(workflow.exportKey, id);
        }
        const workflows: FolderImportMeta['workflows'] = [];
        for (const [i, { folder, draft: workflow }] of draft.workflows.entries()) {
          const folderId = folder === null ? root.id : subFolders[folder]!.id;
          const result = await this.imports.createFromDraft(trx, actor, workflow, {
            name: null,
            description: null,
            folderId,
            reserved: reserved[i]!,
            siblings,
          });
          workflows.push({
            id: result.workflow.id,
            name: result.workflow.name,
            export_key: result.workflow.export_key,
            folder_id: folderId,
            ...result.meta,
          });
        }
        return { folder: root, meta: { folders: created.map((f) => ({ id: f.id, name: f.name, parent_id: f.parent_id })), workflows } };
      });
    });
  }
}

export function isFolderImportBody(body: unknown): body is { data: Record<string, unknown> } {
  return isPlainObject(body) && isPlainObject(body.data);
}
