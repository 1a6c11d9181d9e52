// Run as a short child process by spawn-serve.mjs before `switchyard serve` starts on a data
// dir that must hold data first: opens the embedded database there through dist/ (migrations,
// secret key), creates the default workspace and its first-start token (`bootstrap`), inserts
// the workflows (seed-workflows.mjs), closes, and sends `{token, seeded}` to the parent.
// argv: <data dir> <workflow count>. serve then finds users in place and prints no token.
import { loadConfig } from '../../dist/config.js';
import { buildDeps } from '../../dist/deps.js';
import { seedWorkflows } from './seed-workflows.mjs';

const [dataDir, countArg] = process.argv.slice(2);
const count = Number(countArg);
if (!dataDir || !Number.isInteger(count) || count < 0) throw new Error('usage: seed-data-dir.mjs <data dir> <workflow count>');

// An empty environment, as for the server: nothing of the shell's configuration applies.
const config = loadConfig({}, { dataDir, databaseUrl: null, secretKey: null, logLevel: 'silent' });
const deps = await buildDeps(config);
try {
  const first = await deps.identity.bootstrap();
  if (!first) throw new Error(`${dataDir} already has users: the seed needs a fresh data dir`);
  const seeded = count > 0 ? await seedWorkflows(deps, first.workspace, count) : { count: 0, ms: 0 };
  process.send({ type: 'seeded', token: first.token, seeded });
} finally {
  await deps.close();
}
