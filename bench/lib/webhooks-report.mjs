// Writes the webhook benchmark's results: webhooks.md for people, webhooks.json with the raw numbers.
import fs from 'node:fs';
import path from 'node:path';
import { describeCode } from './code-version.mjs';
import { PROCESSES } from './engine-servers.mjs';
import { describeServeRun, processLegend, sectionHeading } from './suite-report.mjs';

const cell = (text) => String(text).replaceAll('|', '\\|');

function markdown({ machine, settings, server, rows, sections }) {
  const table = [
    '| benchmark | process | goal | measured | result |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${cell(row.benchmark)} | ${row.process} | ${cell(row.goal)} | ${cell(row.measured)} | ${row.verdict} |`),
  ];
  const details = sections.map((section) => `### ${sectionHeading(section)}\n\n${section.details.map((line) => `- ${line}`).join('\n')}`);
  const http = server.http;
  return `# Webhook benchmark

${table.join('\n')}

${processLegend(PROCESSES)}

PASS/FAIL against the goal, judged on the \`serve\` rows only; INFO rows have no goal of their own
(an in-process row's figures are INFO); ERROR: the benchmark could not measure (the command then
fails).

${describeServeRun(server)}

## Details

${details.join('\n\n')}

Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, ${machine.os}, Node ${machine.node}; load average before the run ${machine.loadAverage.join(' / ')}.
Run: ${settings.date}${describeCode(settings.code)}; ${settings.rounds} rounds; load phases of ${settings.durationSeconds} s after ${settings.warmupSeconds} s of warm-up; benchmark 1 at ${settings.connections} connections.
\`switchyard serve\`'s HTTP settings, read inside the process by the probe (Fastify 5 defaults, unchanged by Switchyard): \`keepAliveTimeout\` ${http.keepAliveTimeout} ms, \`maxRequestsPerSocket\` ${http.maxRequestsPerSocket} (no limit), \`requestTimeout\` ${http.requestTimeout}, \`headersTimeout\` ${http.headersTimeout} ms, socket \`timeout\` ${http.timeout}.
Raw numbers: [webhooks.json](webhooks.json).

## How it was measured

- \`npm run bench:webhooks\` compiles \`src/\` to \`dist/\` with tsc and runs \`bench/webhooks.mjs\`, so the code under
  test is the code production runs.
- **The process measured is the product as shipped**: \`${server.command}\`, started by
  \`bench/lib/spawn-serve.mjs\` with the defaults a user gets (log level \`info\`, stdout and stderr
  appended to a file, the engine started, embedded SQLite (WAL) in a fresh temporary data dir), an
  environment without any of the shell's Switchyard, \`DATABASE_URL\`, \`PG*\`, \`PORT\`/\`HOST\` or
  \`NODE_OPTIONS\` variables, plus ${Object.entries(server.env)
    .map(([name, value]) => `\`${name}=${value}\``)
    .join(' and ')}: the
  API and webhook rate limiters on and counting, as in production, but never refusing (their
  defaults, 600 requests and 6,000 deliveries a minute, would refuse most of a load test). It is
  stopped with SIGTERM and must exit 0.
- It sees inside the server without a route or a line of code added to the product: the preload
  \`bench/lib/serve-probe.mjs\` (\`node --import\`) answers the parent over the child's IPC channel with
  the server's clock, SQLite's commits (count and duration; it wraps better-sqlite3's statement
  methods, one wrapper call per statement), the TCP connections the server accepted
  (\`diagnostics_channel\` \`net.server.socket\`), the main thread's event-loop utilization and delay
  over a window, and the HTTP server's settings. The parent waits for backlogs by reading the
  database file (read-only), woken by the server's commits (a watcher on the WAL), never by asking
  the server over HTTP.
- Beside it, in the same run: bare node:http (\`bench/servers/bare-node-http.mjs\`) and bare Fastify 5
  (\`bench/servers/bare-fastify.mjs\`), each answering \`{"hello":"world"}\`; and, as extra rows that are
  not judged, the same benchmarks against the in-process wiring (\`bench/servers/engine-server.mjs\`:
  \`loadConfig\`, \`buildDeps\`, \`bootstrap\`, \`buildApp\` with \`logger: false\` in the bench's own script,
  rate limits off, engine not started; \`BENCH_IN_PROCESS=0\` leaves it out), which is not what users
  run. Each benchmark runs on serve, then at once on the in-process server. Every server has its
  own child process on 127.0.0.1; the load generators run in the parent, so no server shares its
  event loop with them; all share the machine's ${machine.cores} cores.
- The workflows are set up through the REST API with the first-start token serve prints: \`POST /workflows\`,
  \`PUT /graph\` (whose answer gives the node's \`webhook_id\` and its bearer token), \`activate\`. Every
  webhook node uses bearer verification, so each delivery pays the token check (SHA-256 and a
  constant-time compare). A delivery is \`POST /webhooks/<webhook_id>\` with \`Authorization: Bearer <token>\`,
  \`Content-Type: application/json\` and the body \`${settings.deliveryBody}\`. Before any load, one delivery
  checks the answer and one without the token must be refused with 401.
- The code step is \`return { seen: input.body };\` (QuickJS on the code step's worker-thread pool), with the
  default \`reuse_context: true\`: after the step's first run on each worker, runs reuse its warm context
  (src/steps/code/warm-contexts.ts; a worker keeps up to 32, one per step and code, so with one step nearly
  every run here is warm: a fresh context only at a worker's first run and after every 1,000).
- **1. Immediate throughput**: webhook (\`immediate\`) -> code. autocannon posts on ${settings.connections} connections for
  ${settings.rampSeconds} + ${settings.durationSeconds} + 1 s; the server's clock is read (the probe) at ${settings.rampSeconds} s and at ${settings.rampSeconds + settings.durationSeconds} s, and the
  executions with status completed whose \`finished_at\` falls between the two are counted, read from the
  server's SQLite file (read-only) after the backlog drained: completed executions per second, not HTTP
  answers (a 202 only means the execution row was committed). After the load the parent waits until no
  execution of the run is pending or running (read from the database file), and checks that every
  execution completed with its 2 step rows. On serve's rounds, bare node:http's and bare Fastify's
  \`GET /\` run ${settings.durationSeconds} s each at the same connection count in the same round, just before or after (the
  order alternates); each ratio is taken per round and its median reported. One ${settings.warmupSeconds} s warm-up of each
  comes first, discarded. Over the window the probe also reports its main thread's event-loop utilization and delay (\`perf_hooks\`; the delay of a 1 ms
  timer is about the length of a turn of the loop), and the stored rows of the executions that completed in
  it give the time spent queued and running.
- **2. respond_step latency**: webhook (\`respond_step\`) -> code -> respond_to_webhook (\`{"status": 200,
  "body": "{{ nodes.shape }}"}\`), answering \`${settings.respondStepAnswer}\`. Measured with our own loop, not autocannon
  (which records whole milliseconds): undici \`Client\`s on keep-alive connections in the parent, each sending
  one request after the other for ${settings.durationSeconds} s, each request timed with \`process.hrtime\` from the call to
  the last byte of the answer's body (\`bench/lib/latency-loop.mjs\`). 1 and 8 connections alternate over
  ${settings.rounds} rounds after a ${settings.warmupSeconds} s warm-up of each; the table gives the median over the rounds of each
  round's p50 and p99. Every answer must be 200 with the expected body. The stored rows of the same
  executions split the time inside the engine: admission commit, code step, the code step's commit,
  the respond step (the stretch between two steps is mostly the group commit of the first). After each
  phase the parent waits (on the database file) until its runs' final commits are done.
- **3. 200 connections**: the same respond_step workflow under autocannon at 8, 16, 32 and 200
  connections, ${settings.durationSeconds} s each, the order rotating from round to round (after a ${settings.warmupSeconds} s warm-up at 32). Failures
  counted at 200: socket errors (by code, e.g. ECONNRESET), timeouts (autocannon's 10 s), non-2xx answers,
  answers with another body (\`expectBody\`), and reconnections: autocannon silently reopens a connection the
  server closes, so the server counts the TCP connections it accepts during each load and any beyond 200
  count as failures. Throughput is autocannon's mean of per-second answer counts (all 2xx when no
  failure is reported); per round, 200 connections are compared with the best of that round's 8, 16
  and 32, and the median of the rounds' ratios is reported (the best of three noisy samples leans
  high, so the per-count medians are listed too). The main thread's event-loop utilization is read
  over each load. Failures at 8, 16 or 32 connections stop the benchmark with ERROR.
- Any error, timeout or non-2xx answer under load (other than in benchmark 3 at 200 connections, where
  they are what is counted), a failed execution, a missing step row, an error line in serve's log, a
  background error of the in-process engine or a serve that does not exit 0 on SIGTERM makes the
  benchmark ERROR and fails the command after the report is written.
- This is a small shared VM: figures move by tens of percent from one minute to the next. Run twice
  before believing a change of less than about 20%.
`;
}

/** Writes webhooks.md and webhooks.json into `dir`; returns their paths. */
export function writeWebhooksReport(dir, report) {
  fs.mkdirSync(dir, { recursive: true });
  const md = path.join(dir, 'webhooks.md');
  const json = path.join(dir, 'webhooks.json');
  fs.writeFileSync(md, markdown(report));
  fs.writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  return [md, json];
}
