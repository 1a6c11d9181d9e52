// The extra (INFO) rows of the agent benchmark: the engine wired in this script's own process
// (buildDeps over a SQLite file in a temporary data dir, no HTTP layer, so no logger), the same
// workflow run as a draft through the service `POST /run` calls, one at a time, each awaited with
// engine.idle(). Not what users run: it shows what the step costs without serve around it.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildDeps } from '../../dist/deps.js';
import { openSqlite } from '../../dist/db/dialect/sqlite.js';
import { agentGraph } from './instant-provider.mjs';
import { measureShapes, overheadOf } from './overhead.mjs';

export async function measureInProcess({ provider, runs, warmup, log }) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sy-bench-agent-'));
  const database = openSqlite(path.join(dataDir, 'switchyard.db'));
  const deps = await buildDeps(
    {
      databaseUrl: null,
      dataDir,
      secretKey: 'bench-secret-key-bench-secret-key-0123456789',
      baseUrl: 'http://bench.test',
      httpAllow: ['127.0.0.1'],
    },
    { database, timers: true },
  );
  try {
    const workspace = await deps.identity.createWorkspace({ name: 'Bench', slug: 'bench', plan: 'pro' });
    const actor = { workspaceId: workspace.id, userId: workspace.owner_user_id };
    const input = (values) => ({ values, pointer: (name) => `/data/attributes/${name}` });
    const connection = await deps.connections.create(
      actor,
      input({ provider: 'openai_compatible', name: 'Instant', base_url: `${provider.origin}/v1`, api_key: 'sk-bench-key-0000' }),
    );
    const workflow = await deps.workflows.create(actor, input({ name: 'bench: agent' }));
    await deps.workflows.putGraph(actor, workflow.id, { graph: agentGraph(connection.id, provider.origin), layout: false });

    const runOnce = async (turns) => {
      const { execution_id: id } = await deps.executions.run(actor, workflow.id, { draft: true, input: { text: `turns=${turns}` } });
      await deps.engine.idle();
      const execution = await deps.db.selectFrom('executions').select(['status', 'error']).where('id', '=', id).executeTakeFirstOrThrow();
      if (execution.status !== 'completed') throw new Error(`execution ${id} ended ${execution.status}: ${execution.error}`);
      const rows = await deps.db
        .selectFrom('execution_steps')
        .select(['kind', 'status', 'started_at', 'finished_at'])
        .where('workflow_execution_id', '=', id)
        .where('node_id', '=', 'agent')
        .execute();
      return overheadOf(rows, turns);
    };
    return await measureShapes({ label: 'in-process', runOnce, runs, warmup, log });
  } finally {
    await deps.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
