import type { Kysely, Transaction } from 'kysely';
import type { Database, WorkflowCallSource } from '../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A workflow at one end of a call, as the calls route and the map show it. */
export interface CallPeer {
  id: string;
  name: string;
  status: string;
}

/** One workflow of the map with where it is filed. */
export interface MapWorkflow {
  id: string;
  name: string;
  status: string;
  folder_id: string | null;
}

/**
 * The call graph of one workspace (migration 0009). A caller's live canvas always counts; its
 * snapshot counts while the workflow is active (the snapshot it runs). Both ends must be live
 * workflows of the workspace, so a call naming a deleted or foreign workflow is no call.
 */
export class WorkflowCallRepository {
  constructor(
    private readonly db: Db,
    readonly workspaceId: string,
  ) {}

  withTransaction(trx: Transaction<Database>): WorkflowCallRepository {
    return new WorkflowCallRepository(trx, this.workspaceId);
  }

  /** Replaces what one of a caller's graphs calls. */
  async replace(callerId: string, source: WorkflowCallSource, calleeIds: readonly string[]): Promise<void> {
    await this.db
      .deleteFrom('workflow_calls')
      .where('workspace_id', '=', this.workspaceId)
      .where('caller_id', '=', callerId)
      .where('source', '=', source)
      .execute();
    if (calleeIds.length === 0) return;
    await this.db
      .insertInto('workflow_calls')
      .values(calleeIds.map((calleeId) => ({ workspace_id: this.workspaceId, caller_id: callerId, source, callee_id: calleeId })))
      .execute();
  }

  /** Workflows whose canvas, or active snapshot, calls `id`; each once, by name. */
  async callersOf(id: string): Promise<CallPeer[]> {
    const rows = await this.db
      .selectFrom('workflow_calls as c')
      .innerJoin('workflows as w', (join) => join.onRef('w.id', '=', 'c.caller_id').onRef('w.workspace_id', '=', 'c.workspace_id'))
      .select(['w.id', 'w.name', 'w.status'])
      .where('c.workspace_id', '=', this.workspaceId)
      .where('c.callee_id', '=', id)
      .where((eb) => eb.or([eb('c.source', '=', 'canvas'), eb('w.status', '=', 'active')]))
      .distinct()
      .execute();
    return sortByName(rows);
  }

  /** Workflows `id` calls from its canvas, or from its snapshot while it is active; each once, by name. */
  async calleesOf(id: string, active: boolean): Promise<CallPeer[]> {
    const sources: WorkflowCallSource[] = active ? ['canvas', 'snapshot'] : ['canvas'];
    const rows = await this.db
      .selectFrom('workflow_calls as c')
      .innerJoin('workflows as w', (join) => join.onRef('w.id', '=', 'c.callee_id').onRef('w.workspace_id', '=', 'c.workspace_id'))
      .select(['w.id', 'w.name', 'w.status'])
      .where('c.workspace_id', '=', this.workspaceId)
      .where('c.caller_id', '=', id)
      .where('c.source', 'in', sources)
      .distinct()
      .execute();
    return sortByName(rows);
  }

  /**
   * Every call row of the workspace, unjoined: the map filters them in memory (a canvas call
   * always counts, a snapshot call while its caller is active; an end that is no live workflow
   * drops out), which at 2,500 calls is cheaper than the two joins and the distinct.
   */
  rows(): Promise<Array<{ caller_id: string; callee_id: string; source: WorkflowCallSource }>> {
    return this.db
      .selectFrom('workflow_calls')
      .select(['caller_id', 'callee_id', 'source'])
      .where('workspace_id', '=', this.workspaceId)
      .execute();
  }

  /** Every workflow of the workspace with the columns the map reads. */
  workflows(): Promise<MapWorkflow[]> {
    return this.db
      .selectFrom('workflows')
      .select(['id', 'name', 'status', 'folder_id'])
      .where('workspace_id', '=', this.workspaceId)
      .execute();
  }
}

function sortByName(rows: CallPeer[]): CallPeer[] {
  return rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1));
}
