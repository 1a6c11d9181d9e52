// In-process, logger off (not what users run): the Switchyard app from dist/ wired by hand for
// the foundation benchmark's extra rows (config, buildDeps, first-start bootstrap, buildApp with
// `logger: false`, the API rate limit off, the engine not started), on embedded SQLite in a
// temporary data dir. The judged rows measure `switchyard serve` (lib/spawn-serve.mjs).
// argv[2]: how many workflows to seed into the default workspace.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../dist/config.js';
import { buildDeps } from '../../dist/deps.js';
import { buildApp } from '../../dist/app.js';
import { announceReady, freePort } from '../lib/child-server.mjs';
import { seedWorkflows } from '../lib/seed-workflows.mjs';

const workflowCount = Number(process.argv[2] ?? '0');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-bench-'));
const port = await freePort();
// An empty environment: the benchmark must not pick up a DATABASE_URL from the shell.
const config = loadConfig(
  {},
  { port, host: '127.0.0.1', dataDir, databaseUrl: null, secretKey: null, apiRateLimit: 0, logLevel: 'silent' },
);

const deps = await buildDeps(config);
const first = await deps.identity.bootstrap();
if (!first) throw new Error('bootstrap did not create the first token on a fresh data dir');
const seeded = workflowCount > 0 ? await seedWorkflows(deps, first.workspace, workflowCount) : { count: 0, ms: 0 };

const app = await buildApp({ ...deps, config, logger: false });
await app.listen({ port, host: config.host });
announceReady({ port, token: first.token, seeded }, async () => {
  await app.close();
  await deps.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});
