import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';
import { newId } from '../../lib/ids.js';
import { callTargetsOf } from '../../graph/call-targets.js';

/**
 * Workflow documents and the call graph (docs/import.md, docs/calls.md).
 *
 * - `workflows.export_key`: a workflow's portable name, unique per workspace. Exports carry it,
 *   imports keep it when it is free, and documents name called workflows by it, so a parent
 *   imported after its child calls the child again. Existing workflows get a fresh key here.
 * - `workflow_calls`: one row per (caller, where, callee) for the `call_workflow` steps of a
 *   workflow's live canvas (`canvas`) and of its active snapshot (`snapshot`). Written with the
 *   graph that holds them (PUT /graph, activation, duplicate, import), so the calls and the map
 *   read rows instead of parsing every graph: at 2,000 workflows the map reads ~2,000 short rows
 *   (bench/results/map.md). A callee id is not a foreign key: a call may name a workflow deleted
 *   since; readers join live workflows. Rows of a deleted caller go with it (cascade).
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  const text = dialect.textType;
  await db.schema.alterTable('workflows').addColumn('export_key', text).execute();
  const rows = await sql<{ id: string; workspace_id: string; graph: string; status: string; snapshot_graph: string | null }>`
    select w.id, w.workspace_id, w.graph, w.status, s.graph as snapshot_graph
    from workflows w left join workflow_snapshots s on s.id = w.active_snapshot_id`.execute(db);
  for (const row of rows.rows) {
    await sql`update workflows set export_key = ${newId()} where id = ${row.id}`.execute(db);
  }
  await db.schema.createIndex('workflows_export_key_idx').on('workflows').columns(['workspace_id', 'export_key']).unique().execute();

  await db.schema
    .createTable('workflow_calls')
    .addColumn('workspace_id', text, (c) => c.notNull())
    .addColumn('caller_id', text, (c) => c.notNull().references('workflows.id').onDelete('cascade'))
    .addColumn('source', text, (c) => c.notNull())
    .addColumn('callee_id', text, (c) => c.notNull())
    .addPrimaryKeyConstraint('workflow_calls_pk', ['caller_id', 'source', 'callee_id'])
    .execute();
  await db.schema.createIndex('workflow_calls_callee_idx').on('workflow_calls').columns(['workspace_id', 'callee_id']).execute();
  await db.schema.createIndex('workflow_calls_workspace_idx').on('workflow_calls').columns(['workspace_id', 'caller_id']).execute();

  for (const row of rows.rows) {
    const sources: Array<[string, string | null]> = [
      ['canvas', row.graph],
      ['snapshot', row.snapshot_graph],
    ];
    for (const [source, graph] of sources) {
      if (graph === null) continue;
      for (const callee of callTargetsOf(JSON.parse(graph))) {
        await sql`insert into workflow_calls (workspace_id, caller_id, source, callee_id) values (${row.workspace_id}, ${row.id}, ${source}, ${callee})`.execute(
          db,
        );
      }
    }
  }
}
