import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { AppError, notFound } from '../../errors/app-error.js';
import { isUuid } from '../../lib/ids.js';
import { WORKFLOW_STATUSES } from '../../db/schema.js';
import { buildWorkspaceMap, type WorkspaceMap } from '../../graph/workflow-map.js';
import { WorkflowCallRepository, type CallPeer } from '../../store/workflow-call-repository.js';
import { WorkflowRepository } from '../../store/workflow-repository.js';
import type { Actor } from './workflow-service.js';

export interface CallEntry {
  id: string;
  name: string;
  active: boolean;
}

const entry = (peer: CallPeer): CallEntry => ({ id: peer.id, name: peer.name, active: peer.status === 'active' });

/**
 * Who calls whom (docs/calls.md). A workflow's live canvas always counts, and so does its
 * active snapshot while it is active: a call removed from the canvas still runs until the
 * workflow is activated again, and a call added to the canvas is about to.
 */
export class CallGraphService {
  constructor(private readonly db: Kysely<Database>) {}

  async calls(actor: Actor, id: string): Promise<{ callers: CallEntry[]; callees: CallEntry[] }> {
    const workflow = isUuid(id) ? await new WorkflowRepository(this.db, actor.workspaceId).find(id) : undefined;
    if (!workflow) throw notFound('workflow');
    const calls = new WorkflowCallRepository(this.db, actor.workspaceId);
    const [callers, callees] = await Promise.all([
      calls.callersOf(workflow.id),
      calls.calleesOf(workflow.id, workflow.status === 'active'),
    ]);
    return { callers: callers.map(entry), callees: callees.map(entry) };
  }

  async map(actor: Actor, query: { search?: unknown; status?: unknown }): Promise<WorkspaceMap> {
    const search = query.search;
    const status = query.status;
    if (search !== undefined && (typeof search !== 'string' || search.length > 200))
      throw new AppError('invalid_query_parameter', 'search must be a string of at most 200 characters', { parameter: 'search' });
    if (status !== undefined && (typeof status !== 'string' || !(WORKFLOW_STATUSES as readonly string[]).includes(status))) {
      throw new AppError('invalid_query_parameter', `status must be one of ${WORKFLOW_STATUSES.join(', ')}`, { parameter: 'status' });
    }
    const calls = new WorkflowCallRepository(this.db, actor.workspaceId);
    const [members, rows, folders] = await Promise.all([
      calls.workflows(),
      calls.rows(),
      this.db.selectFrom('workflow_folders').select(['id', 'name']).where('workspace_id', '=', actor.workspaceId).execute(),
    ]);
    const active = new Set(members.filter((m) => m.status === 'active').map((m) => m.id));
    const edges = rows.filter((row) => row.source === 'canvas' || active.has(row.caller_id));
    return buildWorkspaceMap(members, edges, new Map(folders.map((f) => [f.id, f.name])), {
      ...(typeof search === 'string' ? { search } : {}),
      ...(typeof status === 'string' ? { status } : {}),
    });
  }
}
