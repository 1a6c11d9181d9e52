import type { Kysely, Transaction } from 'kysely';
import type { Database, ExecutionsTable } from '../db/schema.js';

export type ExecutionRow = ExecutionsTable;
type Db = Kysely<Database> | Transaction<Database>;

/**
 * Read queries over the executions and steps of one workspace, for the API. The engine writes
 * through its own statements (src/engine/execution-store.ts); the workspace id is fixed here at
 * construction, so no read can forget it.
 */
export class ExecutionRepository {
  constructor(
    private readonly db: Db,
    readonly workspaceId: string,
  ) {}

  /** The scoped base query for execution lists; callers add columns, filters, sort and page. */
  selectBase() {
    return this.db.selectFrom('executions').where('executions.workspace_id', '=', this.workspaceId);
  }

  find(id: string): Promise<ExecutionRow | undefined> {
    return this.db
      .selectFrom('executions')
      .selectAll()
      .where('workspace_id', '=', this.workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** The scoped base query for the steps of one execution. */
  selectSteps(executionId: string) {
    return this.db
      .selectFrom('execution_steps')
      .where('execution_steps.workspace_id', '=', this.workspaceId)
      .where('execution_steps.workflow_execution_id', '=', executionId);
  }
}
