// Run as a short child process by spawn-serve.mjs (`seedScript`) before `switchyard serve`
// starts: opens the embedded database in the data dir through dist/, creates the default
// workspace and its first-start token, inserts <count> workflows whose graph is one `schedule`
// trigger (cron argv[4]) in one transaction, then ACTIVATES each through the workflow service,
// the code `POST /workflows/:id/activate` runs (snapshot + schedules row in one commit). Setting
// 10,000 schedules up through HTTP took ~80 ms each on the shared machine (15 minutes), hence
// this. argv: <data dir> <count> [cron].
import { performance } from 'node:perf_hooks';
import { v7 as uuidv7 } from 'uuid';
import { loadConfig } from '../../dist/config.js';
import { buildDeps } from '../../dist/deps.js';
import { formatMicros } from '../../dist/lib/clock.js';
import { POSITION_STEP } from '../../dist/lib/positions.js';

const [dataDir, countArg, cron = '* * * * *'] = process.argv.slice(2);
const count = Number(countArg);
if (!dataDir || !Number.isInteger(count) || count < 1) throw new Error('usage: seed-schedules.mjs <data dir> <count> [cron]');

const config = loadConfig({}, { dataDir, databaseUrl: null, secretKey: null, logLevel: 'silent' });
const deps = await buildDeps(config, { timers: false });
try {
  const started = performance.now();
  const first = await deps.identity.bootstrap();
  if (!first) throw new Error(`${dataDir} already has users: the seed needs a fresh data dir`);
  const workspace = await deps.db.selectFrom('workspaces').selectAll().where('slug', '=', first.workspace).executeTakeFirstOrThrow();
  const graph = JSON.stringify({
    nodes: [{ id: 'tick', type: 'schedule', config: { cron, catch_up: 'skip' }, position: { x: 0, y: 0 } }],
    edges: [],
  });
  const now = formatMicros(Date.now() * 1000);
  const rows = Array.from({ length: count }, (_, i) => ({
    id: uuidv7(),
    workspace_id: workspace.id,
    user_id: workspace.owner_user_id,
    folder_id: null,
    position: (i + 1) * POSITION_STEP,
    name: `bench schedule ${i}`,
    description: null,
    status: 'inactive',
    ai_auto_probe: false,
    build_mode: 'advanced',
    build_prompt: null,
    graph,
    active_snapshot_id: null,
    export_key: uuidv7(),
    created_at: now,
    updated_at: now,
  }));
  await deps.db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += 500)
      await trx
        .insertInto('workflows')
        .values(rows.slice(i, i + 500))
        .execute();
  });
  const actor = { workspaceId: workspace.id, userId: workspace.owner_user_id };
  for (const row of rows) await deps.workflows.activate(actor, row.id);
  process.send({ type: 'seeded', token: first.token, seeded: { count, ms: Math.round(performance.now() - started) } });
} finally {
  await deps.close();
}
