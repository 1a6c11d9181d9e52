// A child process that runs the engine on a given database, starts one execution and keeps
// running it until it is killed. Used by engine-crash.test.ts.
import { buildDeps } from '../../src/deps.js';
import { openPostgres } from '../../src/db/dialect/postgres.js';
import { openSqlite } from '../../src/db/dialect/sqlite.js';

const [dialect, location, dataDir, workspaceId, userId, workflowId] = process.argv.slice(2);
const database = dialect === 'postgres' ? openPostgres(location!) : openSqlite(location!);
const deps = await buildDeps(
  // A short lease on PostgreSQL, so the survivor in the test takes over within a second or two.
  {
    databaseUrl: null,
    dataDir: dataDir!,
    secretKey: 'test-secret-key-test-secret-key-0123456789',
    baseUrl: 'http://sy.test',
    httpAllow: ['127.0.0.1'],
    leaseMs: 1_000,
    heartbeatMs: 250,
  },
  { database, timers: true },
);
const started = await deps.executions.run({ workspaceId: workspaceId!, userId: userId! }, workflowId!, { draft: true });
process.stdout.write(`${JSON.stringify(started)}\n`);
setInterval(() => {}, 1000);
