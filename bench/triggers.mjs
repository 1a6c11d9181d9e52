// `npm run bench:triggers`: Slack events at the platform endpoint of `node dist/main.js serve`
// (the npm script builds first). Sets up a data dir with the operator CLI (a workspace, a token,
// the Slack app's signing secret, an installation), one workflow whose app_event trigger matches
// and four that do not (other channels), then loads POST /webhooks/inbound/slack from 16
// connections with freshly signed event_callback bodies, every 10th a redelivery of an earlier
// event (X-Slack-Retry-Num). Measures events/s and the ack latency (p50/p99), then checks that
// exactly one execution exists per distinct event. Writes bench/results/triggers.{md,json}.
/* global fetch */
import { spawn, execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { apiClient } from './lib/api-client.mjs';
import { freePort } from './lib/child-server.mjs';
import { machineFacts } from './lib/machine.mjs';
import { wholeNumber } from './lib/env-number.mjs';
import { cleanEnvironment, SERVE_LOG } from './lib/spawn-serve.mjs';
import { logStats } from './lib/serve-log.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const main = path.join(root, 'dist', 'main.js');
const SECRET = 'bench-signing-secret-0123456789abcdef';
const settings = {
  date: new Date().toISOString(),
  connections: wholeNumber('BENCH_CONNECTIONS', 16),
  durationSeconds: wholeNumber('BENCH_DURATION', 10),
  warmupSeconds: wholeNumber('BENCH_WARMUP', 3),
  redeliveryEvery: 10,
  targetP99Ms: 20,
};

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sy-bench-triggers-'));
const port = await freePort();
// The defaults a user gets (log level info, every request logged to a file), but the rate limits:
// counting at 10,000,000 a minute, never refusing, as in the other suites (bench/README.md).
const env = {
  ...cleanEnvironment(),
  SWITCHYARD_DATA_DIR: dataDir,
  PORT: String(port),
  HOST: '127.0.0.1',
  SWITCHYARD_WEBHOOK_RATE_LIMIT: '10000000',
  SWITCHYARD_API_RATE_LIMIT: '10000000',
};
const logFile = path.join(dataDir, SERVE_LOG);
const cli = (...args) => execFileSync(process.execPath, [main, ...args], { env, encoding: 'utf8' }).trim();

cli('workspace', 'create', '--name', 'Bench', '--slug', 'bench', '--plan', 'pro');
const token = JSON.parse(cli('token', 'create', '--workspace', 'bench', '--scope', 'build', '--json')).token;
cli('app', 'set', 'slack', '--signing-secret', SECRET);
cli(
  'app',
  'install',
  'slack',
  '--workspace',
  'bench',
  '--account-id',
  'T0BENCH',
  '--bot-token',
  'xoxb-bench',
  '--bot-user-id',
  'U0BOT',
  '--bot-id',
  'B0BOT',
);

const logFd = openSync(logFile, 'a');
const server = spawn(process.execPath, [main, 'serve'], { env, stdio: ['ignore', logFd, logFd] });
closeSync(logFd);
const origin = `http://127.0.0.1:${port}`;
for (let i = 0; ; i += 1) {
  try {
    if ((await fetch(`${origin}/readyz`)).ok) break;
  } catch {
    // not listening yet
  }
  if (i > 600) throw new Error('switchyard serve did not become ready');
  await new Promise((resolve) => setTimeout(resolve, 100));
}

const api = apiClient(origin, token);
const graph = (channels) => ({
  nodes: [
    { id: 'event', type: 'app_event', config: { channels }, position: { x: 0, y: 0 } },
    { id: 'tag', type: 'set', config: { values: { text: '{{ trigger.payload.text }}' } }, position: { x: 200, y: 0 } },
  ],
  edges: [{ source: 'event', target: 'tag' }],
});
for (let k = 0; k < 5; k += 1) {
  const id = await api.createWorkflow(`bench trigger ${k}`);
  await api.putGraph(id, graph(k === 0 ? ['C0BENCH'] : [`C0OTHER${k}`]));
  await api.activate(id);
}

let sequence = 0;
const sent = new Set();
function signedEvent(eventId, retry) {
  const body = JSON.stringify({
    token: 'x',
    team_id: 'T0BENCH',
    api_app_id: 'A0BENCH',
    type: 'event_callback',
    event_id: eventId,
    event_time: 1_793_491_200,
    event: {
      type: 'message',
      user: 'U0HUMAN',
      text: `hello ${eventId}`,
      ts: `1793491200.${eventId.slice(2).padStart(6, '0')}`,
      channel: 'C0BENCH',
      channel_type: 'channel',
      event_ts: '1793491200.000001',
    },
  });
  const ts = Math.floor(Date.now() / 1000);
  const signature = `v0=${createHmac('sha256', SECRET).update(`v0:${ts}:${body}`).digest('hex')}`;
  const headers = {
    'content-type': 'application/json',
    'x-slack-request-timestamp': String(ts),
    'x-slack-signature': signature,
    ...(retry ? { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' } : {}),
  };
  return { method: 'POST', path: '/webhooks/inbound/slack', headers, body };
}
const setupRequest = () => {
  sequence += 1;
  if (sequence % settings.redeliveryEvery === 0 && sent.size > 0) return signedEvent(`Ev${sequence - 5}`, true);
  const id = `Ev${sequence}`;
  sent.add(id);
  return signedEvent(id, false);
};
const run = (duration) =>
  new Promise((resolve, reject) => {
    autocannon({ url: origin, connections: settings.connections, duration, requests: [{ setupRequest }] }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });

const loadBefore = os.loadavg().map((v) => Number(v.toFixed(2)));
await run(settings.warmupSeconds);
const result = await run(settings.durationSeconds);
const loadAfter = os.loadavg().map((v) => Number(v.toFixed(2)));
// Let the engine finish what was accepted, then compare executions with distinct events.
await new Promise((resolve) => setTimeout(resolve, 3000));
server.kill('SIGTERM');
const exitCode = await new Promise((resolve) => server.once('exit', (code) => resolve(code)));
const log = await logStats(logFile);
if (exitCode !== 0) throw new Error(`switchyard serve exited with code ${exitCode} on SIGTERM`);
const db = new Database(path.join(dataDir, 'switchyard.db'), { readonly: true });
const executions = db.prepare('select count(*) as n from executions').get().n;
const keys = db.prepare("select count(*) as n from platform_events where dedupe_key like 'event:%'").get().n;
db.close();
rmSync(dataDir, { recursive: true, force: true });

const failures = { errors: result.errors, timeouts: result.timeouts, non2xx: result.non2xx };
const figures = {
  eventsPerSecond: Math.round(result.requests.average),
  requests: result.requests.total,
  ackP50Ms: result.latency.p50,
  ackP99Ms: result.latency.p99,
  ackMaxMs: result.latency.max,
  distinctEvents: sent.size,
  executions,
  dedupeKeys: keys,
  duplicateExecutions: executions - keys,
};
const verdict =
  failures.errors + failures.timeouts + failures.non2xx === 0 &&
  log.errors === 0 &&
  figures.ackP99Ms <= settings.targetP99Ms &&
  executions === keys
    ? 'met'
    : 'not met';
const report = {
  machine: machineFacts(),
  settings,
  loadAverage: { before: loadBefore, after: loadAfter },
  failures,
  figures,
  verdict,
  log: { bytes: log.bytes, lines: log.lines, errors: log.errors, errorSamples: log.errorSamples },
};
writeFileSync(path.join(here, 'results', 'triggers.json'), `${JSON.stringify(report, null, 2)}\n`);
const md = `# Platform triggers benchmark (Slack events)

Measured ${settings.date} with \`npm run bench:triggers\` (bench/triggers.mjs) against \`node dist/main.js serve\`
on SQLite at its defaults (log level info, stdout and stderr to a file: ${log.lines.toLocaleString('en-US')} lines, ${(log.bytes / 1e6).toFixed(1)} MB; rate limits counting at
10,000,000 a minute, never refusing), on ${report.machine.cores} cores (${report.machine.cpu}, Node ${report.machine.node}). Load average (1/5/15 min)
before: ${loadBefore.join(' / ')}, after: ${loadAfter.join(' / ')}; the load generator (autocannon) runs in the benchmark's own process on the same cores.

Each request is a freshly signed \`event_callback\` (a channel message) to \`POST /webhooks/inbound/slack\`:
verified (HMAC-SHA256 over the raw body), routed by team id, matched against five active workflows'
\`app_event\` triggers (one matches), deduplicated by event id and committed with its execution
before the 200. Every ${settings.redeliveryEvery}th request is a redelivery of an earlier event (\`X-Slack-Retry-Num: 1\`).
${settings.connections} connections, ${settings.warmupSeconds} s warm-up, ${settings.durationSeconds} s measured.

| figure | value |
| --- | --- |
| events/s at ${settings.connections} connections | ${figures.eventsPerSecond.toLocaleString('en-US')} |
| ack p50 | ${figures.ackP50Ms} ms |
| ack p99 (target <= ${settings.targetP99Ms} ms; Slack waits 3 s) | ${figures.ackP99Ms} ms |
| ack max | ${figures.ackMaxMs} ms |
| errors / timeouts / non-2xx | ${failures.errors} / ${failures.timeouts} / ${failures.non2xx} |
| distinct events sent (warm-up included) | ${figures.distinctEvents.toLocaleString('en-US')} |
| executions / event keys recorded | ${figures.executions.toLocaleString('en-US')} / ${figures.dedupeKeys.toLocaleString('en-US')} (duplicates: ${figures.duplicateExecutions}) |

Verdict: **${verdict}**.
`;
writeFileSync(path.join(here, 'results', 'triggers.md'), md);
console.log(md);
