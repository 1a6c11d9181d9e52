import type { Kysely, Transaction } from 'kysely';
import type { AppProvider, Database, BuildMode } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../errors/app-error.js';
import { isUuid, newId } from '../../lib/ids.js';
import { isPlainObject } from '../../lib/json.js';
import { POSITION_STEP } from '../../lib/positions.js';
import { UNBOUND_ID } from '../../graph/call-targets.js';
import type { Graph } from '../../graph/graph-types.js';
import { validateGraph } from '../../graph/validate-graph.js';
import { layoutGraph } from '../../graph/layout-graph.js';
import { WEBHOOK_READ_ONLY_FIELDS } from '../../steps/webhook/index.js';
import type { ImportDraft } from '../../documents/import-draft.js';
import type { PlaceholderEntry, Requirement, RequirementKind, SourceNodeEntry } from '../../documents/import-report.js';
import { writePointer } from '../../documents/json-pointer-path.js';
import { ERROR_WORKFLOW_POINTER, errorWorkflowRequirementDetail } from '../../documents/error-workflow-reference.js';
import { readWorkflowDocument } from '../../documents/read-document.js';
import { FolderRepository } from '../../store/folder-repository.js';
import { AppInstallationRepository } from '../../store/app-installation-repository.js';
import { ReferenceLookups } from '../../store/reference-lookups.js';
import { WorkflowRepository, type WorkflowRow } from '../../store/workflow-repository.js';
import { readString, rejectUnknown, Violations, type AttributeInput } from '../attribute-input.js';
import { syncWebhooks } from '../webhooks/webhook-sync.js';
import { invalidGraph } from './runnable-graph.js';
import { recordCalls } from './workflow-calls.js';
import { clearConnections } from './connection-bindings.js';
import type { Actor } from './workflow-service.js';

/** The import answer's `meta` (DESIGN.md "import report"; docs/import.md). */
export interface ImportMeta {
  source: ImportDraft['source'];
  placeholders: PlaceholderEntry[];
  requirements: Record<RequirementKind, Requirement[]>;
  /** Bearer tokens of the new webhook nodes, by node id: shown once, as PUT /graph shows them. */
  webhook_tokens: Record<string, string>;
  /** Where each n8n node went (n8n imports only). */
  source_nodes?: SourceNodeEntry[];
}

export interface ImportOptions {
  name: string | null;
  description: string | null;
  folderId: string | null;
  /** Folder imports: the id and export key chosen for this workflow up front… */
  reserved?: { id: string; exportKey: string };
  /** …and every document export key of the import -> the id its workflow gets, for calls among them. */
  siblings?: ReadonlyMap<string, string>;
}

const IMPORT_ATTRIBUTES = ['name', 'description', 'document', 'folder_id'];
/** How many times an import runs when concurrent imports keep taking its export key. */
const EXPORT_KEY_ATTEMPTS = 3;

/**
 * `POST /workflows` with a `document`: the document is read (documents/), its references bound
 * in the workspace, its secrets and connections left out, and the workflow created inactive in
 * one transaction with a report of what is left to finish.
 */
export class WorkflowImports {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly webhooks: { secretKey: string; baseUrl: string },
    private readonly isUniqueViolation: (error: unknown) => boolean,
  ) {}

  /**
   * Runs an import transaction again when it lost a race for an export key: two imports of one
   * document at once both find its key free, and the second insert hits the unique index
   * (PostgreSQL, READ COMMITTED; SQLite runs transactions one at a time). The retry sees the
   * first one's key taken and takes a fresh one. `attempt` reads the document again each time:
   * binding and reporting write into the draft.
   */
  async withExportKeyRetry<T>(attempt: () => Promise<T>): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await attempt();
      } catch (error) {
        if (tries === EXPORT_KEY_ATTEMPTS || !this.isUniqueViolation(error)) throw error;
      }
    }
  }

  async importWorkflow(actor: Actor, input: AttributeInput): Promise<{ workflow: WorkflowRow; meta: ImportMeta }> {
    const violations = new Violations();
    rejectUnknown(
      input,
      IMPORT_ATTRIBUTES,
      violations,
      (name) => `${name} cannot be set on an import (it takes name, description, document and folder_id)`,
    );
    const name = readString(input, 'name', violations, { max: 200 });
    if (name === '') violations.add(input.pointer('name'), 'name must not be empty');
    const description = readString(input, 'description', violations, { max: 10_000, nullable: true });
    const folderId = input.values.folder_id;
    if (folderId !== undefined && folderId !== null && !isUuid(folderId))
      violations.add(input.pointer('folder_id'), 'folder_id must be a folder id or null');
    violations.throwIfAny();
    if (typeof folderId === 'string' && !(await new FolderRepository(this.db, actor.workspaceId).find(folderId))) {
      throw new AppError('validation_failed', 'folder_id names no folder of this workspace', { pointer: input.pointer('folder_id') });
    }
    const options = { name: name ?? null, description: description ?? null, folderId: typeof folderId === 'string' ? folderId : null };
    return this.withExportKeyRetry(() => {
      const draft = readWorkflowDocument(input.values.document, input.pointer('document'));
      return this.db.transaction().execute((trx) => this.createFromDraft(trx, actor, draft, options));
    });
  }

  /** Creates one workflow from a draft inside `trx` (folder imports call it once per workflow). */
  async createFromDraft(
    trx: Transaction<Database>,
    actor: Actor,
    draft: ImportDraft,
    options: ImportOptions,
  ): Promise<{ workflow: WorkflowRow; meta: ImportMeta }> {
    const report = draft.report;
    const graph = draft.graph;
    const id = options.reserved?.id ?? newId();
    const lookups = new ReferenceLookups(trx, actor.workspaceId);
    const installations = new AppInstallationRepository(trx, actor.workspaceId);
    const repo = new WorkflowRepository(trx, actor.workspaceId);
    const exportKey = options.reserved?.exportKey ?? (await this.freeExportKey(lookups, draft.exportKey));

    for (const binding of draft.bindings) {
      const bound = await this.bind(lookups, installations, binding.by, binding.resource, {
        id,
        requestedKey: draft.exportKey,
        siblings: options.siblings,
      });
      // An installation's pointer is the node that needs it: nothing in the graph holds its id.
      if (binding.resource !== 'installation') writePointer(graph, binding.pointer, bound ?? UNBOUND_ID);
      if (bound === null)
        report.require('bindings', {
          pointer: binding.pointer,
          detail: binding.detail,
          resource: binding.resource,
          ...(binding.by ?? {}),
          ...(binding.facts ?? {}),
        });
    }
    const errorWorkflowId = await this.bindErrorWorkflow(lookups, draft, id, options.siblings);
    for (const pointer of clearConnections(graph)) {
      report.require('credentials', { pointer, detail: 'connections are never imported: choose a connection of this workspace' });
    }
    const unsetSecretsFrom = stripWebhookSecrets(graph);

    const result = validateGraph(graph, draft.graphPointer);
    if (!result.ok) throw invalidGraph(result.violations);
    const laidOut: Graph = draft.layout ? layoutGraph(result.graph) : result.graph;
    const now = this.clock.now();
    const row: WorkflowRow = {
      id,
      workspace_id: actor.workspaceId,
      user_id: actor.userId,
      folder_id: options.folderId,
      position: ((await repo.maxPosition(options.folderId)) ?? 0) + POSITION_STEP,
      name: (options.name ?? draft.name ?? 'Imported workflow').trim().slice(0, 200) || 'Imported workflow',
      description: options.description ?? draft.description?.slice(0, 10_000) ?? null,
      status: 'inactive',
      ai_auto_probe: draft.attributes.ai_auto_probe ?? false,
      build_mode: (draft.attributes.build_mode as BuildMode | undefined) ?? 'advanced',
      build_prompt: draft.attributes.build_prompt ?? null,
      graph: '{"nodes":[],"edges":[]}',
      active_snapshot_id: null,
      export_key: exportKey,
      error_workflow_id: errorWorkflowId,
      created_at: now,
      updated_at: now,
    };
    await repo.insert(row);
    const synced = await syncWebhooks(
      { trx, workspaceId: actor.workspaceId, workflowId: id, ...this.webhooks, now, allowUnsetSecrets: true },
      laidOut,
      draft.graphPointer,
    );
    if (synced.violations.length > 0) throw invalidGraph(synced.violations);
    for (const index of synced.unsetSecrets) {
      const node = synced.graph.nodes[index]!;
      report.require('secrets', {
        pointer: `/nodes/${index}/config/verification/secret`,
        detail: `webhook node "${node.id}" verifies HMAC signatures; secrets are never imported${unsetSecretsFrom.has(index) ? ' (the document carried one and it was dropped)' : ''}: set verification.secret before activating`,
        node_id: node.id,
      });
    }
    row.graph = JSON.stringify(synced.graph);
    await repo.update(id, { graph: row.graph });
    await recordCalls(trx, actor.workspaceId, id, 'canvas', synced.graph);
    const meta: ImportMeta = { source: draft.source, ...report.toMeta(), webhook_tokens: synced.tokens };
    if (draft.source.format === 'n8n') meta.source_nodes = report.sourceNodes;
    return { workflow: row, meta };
  }

  /**
   * The document's error workflow bound by export key like a call target (a workflow of this
   * workspace, or of the same folder import), never the workflow itself; unbound, it is a
   * requirement and the attribute stays null (documents/error-workflow-reference.ts).
   */
  private async bindErrorWorkflow(
    lookups: ReferenceLookups,
    draft: ImportDraft,
    id: string,
    siblings: ReadonlyMap<string, string> | undefined,
  ): Promise<string | null> {
    const reference = draft.errorWorkflow;
    if (!reference) return null;
    const bound = siblings?.get(reference.export_key) ?? (await lookups.workflowByExportKey(reference.export_key))?.id ?? null;
    if (bound !== null && bound !== id && reference.export_key !== draft.exportKey) return bound;
    draft.report.require('bindings', {
      pointer: ERROR_WORKFLOW_POINTER,
      detail: errorWorkflowRequirementDetail(reference),
      resource: 'workflow',
      attribute: 'error_workflow_id',
      export_key: reference.export_key,
    });
    return null;
  }

  /** The document's export key when no workflow here has it; a fresh one otherwise. */
  async freeExportKey(lookups: ReferenceLookups, wanted: string | null): Promise<string> {
    if (wanted !== null && (await lookups.workflowByExportKey(wanted)) === undefined) return wanted;
    return newId();
  }

  private async bind(
    lookups: ReferenceLookups,
    installations: AppInstallationRepository,
    by: ImportDraft['bindings'][number]['by'],
    resource: string,
    self: { id: string; requestedKey: string | null; siblings: ReadonlyMap<string, string> | undefined },
  ): Promise<string | null> {
    if (by === null) return null;
    if ('providers' in by) return installationOf(installations, by);
    if ('self' in by) return self.id;
    if ('export_key' in by) {
      if (self.requestedKey !== null && by.export_key === self.requestedKey) return self.id;
      const sibling = self.siblings?.get(by.export_key);
      if (sibling !== undefined) return sibling;
      return (await lookups.workflowByExportKey(by.export_key))?.id ?? null;
    }
    if ('slug' in by) return (await lookups.storeBySlug(by.slug))?.id ?? null;
    if (!isUuid(by.id)) return null;
    if (resource === 'workflow') return (await lookups.workflowExists(by.id)) ? by.id : null;
    if (resource === 'store') return (await lookups.storesByIds([by.id])).has(by.id) ? by.id : null;
    return null;
  }
}

/** The id of an installation of the workspace that serves a node (any of the providers, the pinned account if any), or null. */
async function installationOf(
  repo: AppInstallationRepository,
  by: { providers: AppProvider[]; account_id?: string },
): Promise<string | null> {
  for (const provider of by.providers) {
    const found = (await repo.listForProvider(provider)).find((row) => by.account_id === undefined || row.account_id === by.account_id);
    if (found) return found.id;
  }
  return null;
}

/**
 * Drops what a document may not decide for a webhook node: its endpoint identity (assigned
 * here) and any HMAC secret. Returns the indexes of nodes whose secret was dropped.
 */
function stripWebhookSecrets(graph: Record<string, unknown>): Set<number> {
  const dropped = new Set<number>();
  const nodes = Array.isArray(graph.nodes) ? graph.nodes : [];
  nodes.forEach((node: unknown, index) => {
    if (!isPlainObject(node) || node.type !== 'webhook' || !isPlainObject(node.config)) return;
    for (const field of WEBHOOK_READ_ONLY_FIELDS) delete node.config[field];
    if (isPlainObject(node.config.verification) && node.config.verification.secret !== undefined) {
      delete node.config.verification.secret;
      dropped.add(index);
    }
  });
  return dropped;
}
