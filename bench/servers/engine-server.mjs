// In-process, logger off (not what users run): the Switchyard app from dist/ wired by hand for
// the engine and webhook benchmarks' extra rows (config from an empty environment, buildDeps,
// first-start bootstrap, buildApp with `logger: false`, the API and webhook rate limits off, the
// engine not started; embedded SQLite in a temporary data dir removed on stop). The judged rows
// measure `switchyard serve` (lib/spawn-serve.mjs). The parent sees inside through the same
// probe as serve's (lib/probe.mjs, over the fork IPC channel), which here also reports the
// engine's group-commit counter and the background errors, both out of reach from outside serve.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { installProbe } from '../lib/probe.mjs';
import { loadConfig } from '../../dist/config.js';
import { buildDeps } from '../../dist/deps.js';
import { buildApp } from '../../dist/app.js';
import { announceReady, freePort } from '../lib/child-server.mjs';

let deps = null;
let backgroundErrors = 0;
// Installed before the database opens, so the SQLite commit counter sees every statement.
installProbe({ extra: () => ({ groupCommits: deps?.engine.batcher.commits ?? 0, backgroundErrors }) });

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-engine-bench-'));
const port = await freePort();
// An empty environment: the benchmark must not pick up a DATABASE_URL from the shell.
const config = loadConfig(
  {},
  { port, host: '127.0.0.1', dataDir, databaseUrl: null, secretKey: null, apiRateLimit: 0, webhookRateLimit: 0, logLevel: 'silent' },
);

deps = await buildDeps(config, {
  onBackgroundError: (error) => {
    backgroundErrors += 1;
    if (backgroundErrors <= 5) console.error('engine-server: background error:', error);
  },
});
const first = await deps.identity.bootstrap();
if (!first) throw new Error('bootstrap did not create the first token on a fresh data dir');

const app = await buildApp({ ...deps, config, logger: false });
await app.listen({ port, host: config.host });
announceReady({ port, token: first.token, databaseFile: path.join(dataDir, 'switchyard.db') }, async () => {
  await app.close();
  await deps.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});
