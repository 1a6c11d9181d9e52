// `npm run bench:fuzz`: the long fuzz run. Builds nothing itself (the npm script runs
// `npm run build` first, and runs this file under tsx so it can share the generators of the
// fuzz test in test/support/fuzz/). Starts the real `node dist/main.js serve` as a child on a
// fresh temporary data dir (embedded SQLite, API and webhook rate limits off, otherwise
// defaults), seeds two workspaces, fires FUZZ_REQUESTS generated requests (default 100,000)
// over real HTTP on FUZZ_CONNECTIONS connections plus raw-socket cases, checks every answer,
// and writes bench/results/fuzz.{md,json}. Exits 1 on any finding.
import { execFileSync, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { Pool } from 'undici';
import { freePort } from './lib/child-server.mjs';
import { machineFacts } from './lib/machine.mjs';
import { prepareFuzz } from '../test/support/fuzz/fuzz-setup.ts';
import { requestArbitrary } from '../test/support/fuzz/fuzz-requests.ts';
import { checkAnswer, describeRequest, recordSent } from '../test/support/fuzz/fuzz-checks.ts';
import { checkCrossPair, crossPairArbitrary } from '../test/support/fuzz/fuzz-cross.ts';
import { rawCaseArbitrary, sendRaw } from '../test/support/fuzz/fuzz-raw.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');

function whole(name, fallback, min = 1) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number (at least ${min}), got "${raw}"`);
  return value;
}

/** The commit measured, and whether src/ differed from it (null outside a git checkout). */
function codeVersion() {
  try {
    const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return { commit: git('rev-parse', '--short', 'HEAD'), srcChanged: git('status', '--porcelain', '--', 'src') !== '' };
  } catch {
    return null;
  }
}

/** What earlier runs found, each fixed in src/ with a regression test (test/protocol-errors.test.ts). */
const EARLIER_FINDS = [
  'a parser error after pipelined requests was answered in place of their answers (now: their answers first, then 400)',
  'CONNECT got no answer at all, the connection dropped (now: 400 bad_request)',
  'a 422 pointed at a member name holding `~` or `/` unescaped, which the JSON:API schema refuses (now: `~0`, `~1`)',
  'a client still sending an over-limit body saw a reset (EPIPE) instead of the 413 (now: a lingering close)',
];

const settings = {
  date: new Date().toISOString(),
  code: codeVersion(),
  requests: whole('FUZZ_REQUESTS', 100_000),
  connections: whole('FUZZ_CONNECTIONS', 4),
  seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : randomInt(2 ** 31),
  batch: 1000,
  mix: { generated: 90, crossWorkspacePairs: 8, rawSocket: 2 },
};

/** `node dist/main.js serve` on a free port and a fresh data dir; resolves once it listens, with the first token. */
async function startServer() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sy-fuzz-'));
  const port = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    SWITCHYARD_DATA_DIR: dataDir,
    SWITCHYARD_API_RATE_LIMIT: '0',
    SWITCHYARD_WEBHOOK_RATE_LIMIT: '0',
  };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, [path.join(root, 'dist/main.js'), 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = { lines: 0, errors: 0, errorSamples: [], stderr: '' };
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let token = null;
  let pending = '';
  const ready = new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop();
      for (const line of lines) {
        log.lines += 1;
        const found = /^\s+(sy_[A-Za-z0-9]+)\s*$/.exec(line);
        if (found) token = found[1];
        if (line.includes('listening on')) resolve();
        // pino levels: 50 error, 60 fatal. The log is consumed so the pipe never blocks the server.
        if (/"level":(50|60)/.test(line)) {
          log.errors += 1;
          if (log.errorSamples.length < 10) log.errorSamples.push(line.slice(0, 500));
        }
      }
    });
    child.stderr.on('data', (chunk) => (log.stderr = (log.stderr + chunk).slice(-4000)));
    exited.then(({ code }) => reject(new Error(`the server exited before it listened (code ${code}): ${log.stderr}`)));
  });
  await ready;
  if (!token) throw new Error('the server did not print its first token');
  const cli = (...args) => execFileSync(process.execPath, [path.join(root, 'dist/main.js'), ...args], { env, encoding: 'utf8' });
  const mint = (workspace, scope) => JSON.parse(cli('token', 'create', '--workspace', workspace, '--scope', scope, '--json')).token;
  cli('workspace', 'create', '--name', 'Other', '--slug', 'other', '--plan', 'pro');
  cli('workspace', 'create', '--name', 'Free', '--slug', 'free');
  const tokens = { build: token, read: mint('default', 'read'), free: mint('free', 'build') };
  return { child, port, dataDir, exited, log, tokens, other: mint('other', 'build') };
}

function client(port) {
  const pool = new Pool(`http://127.0.0.1:${port}`, {
    connections: settings.connections,
    pipelining: 1,
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
  });
  const send = async (request) => {
    const response = await pool.request({ path: request.url, method: request.method, headers: request.headers, body: request.body });
    return { status: response.statusCode, headers: response.headers, body: await response.body.text() };
  };
  return { pool, send };
}

async function main() {
  const machine = machineFacts();
  const server = await startServer();
  const { pool, send } = client(server.port);
  const { ctx, foreign } = await prepareFuzz(send, server.tokens, server.other);

  const figures = {
    requests: 0,
    byStatus: {},
    serverErrors: 0,
    nonJsonApiErrors: 0,
    leaks: 0,
    crossWorkspace: 0,
    crossPairs: 0,
    rawCases: 0,
    rawUnclean: 0,
    clientRefused: 0,
    networkErrors: 0,
    samples: { findings: [], clientRefused: [], networkErrors: [], rawUnclean: [], noAnswer: [] },
  };
  const count = (status) => {
    figures.requests += 1;
    figures.byStatus[status] = (figures.byStatus[status] ?? 0) + 1;
  };
  const note = (findings, request) => {
    for (const finding of findings) {
      if (finding.kind === 'server_error') figures.serverErrors += 1;
      else if (finding.kind === 'not_jsonapi_error') figures.nonJsonApiErrors += 1;
      else if (finding.kind === 'leak') figures.leaks += 1;
      else figures.crossWorkspace += 1;
      if (figures.samples.findings.length < 30) figures.samples.findings.push({ ...finding, request: describeRequest(request) });
    }
  };
  const sample = (list, text) => list.length < 10 && list.push(text);

  /** One generated request; an error before any answer (undici refusing it, a reset) is counted apart. */
  async function fire(request) {
    recordSent(request, foreign);
    try {
      const response = await send(request);
      count(response.status);
      return response;
    } catch (error) {
      if (error?.code === 'UND_ERR_INVALID_ARG' || error?.name === 'InvalidArgumentError') {
        figures.clientRefused += 1;
        sample(figures.samples.clientRefused, `${error.message}: ${describeRequest(request)}`);
      } else {
        figures.networkErrors += 1;
        sample(figures.samples.networkErrors, `${error?.code ?? ''} ${error?.message}: ${describeRequest(request)}`);
      }
      return null;
    }
  }

  const work = fc.oneof(
    { weight: settings.mix.generated, arbitrary: requestArbitrary(ctx).map((request) => ({ type: 'request', request })) },
    { weight: settings.mix.crossWorkspacePairs, arbitrary: crossPairArbitrary(ctx).map((pair) => ({ type: 'pair', pair })) },
    { weight: settings.mix.rawSocket, arbitrary: rawCaseArbitrary(server.tokens.build).map((raw) => ({ type: 'raw', raw })) },
  );

  let batchIndex = 0;
  let queue = [];
  const next = () => {
    if (figures.requests + figures.clientRefused + figures.networkErrors >= settings.requests) return null;
    if (queue.length === 0) queue = fc.sample(work, { numRuns: settings.batch, seed: settings.seed + batchIndex++ });
    return queue.pop();
  };

  const started = performance.now();
  let lastReport = started;
  async function worker() {
    for (let item = next(); item; item = next()) {
      if (item.type === 'request') {
        const response = await fire(item.request);
        if (response) note(checkAnswer(item.request, response, foreign), item.request);
      } else if (item.type === 'pair') {
        figures.crossPairs += 1;
        const answer = await fire(item.pair.request);
        const twin = await fire(item.pair.twin);
        if (answer && twin)
          note([...checkCrossPair(item.pair, answer, twin), ...checkAnswer(item.pair.request, answer, foreign)], item.pair.request);
      } else {
        figures.rawCases += 1;
        const outcome = await sendRaw(server.port, item.raw.bytes);
        const request = { method: 'RAW', url: item.raw.name, headers: {} };
        if (outcome.unclean) {
          figures.rawUnclean += 1;
          sample(figures.samples.rawUnclean, `${item.raw.name}: ${outcome.unclean}`);
        }
        if (outcome.responses.length === 0) {
          count('no answer');
          sample(figures.samples.noAnswer, item.raw.name);
        }
        for (const response of outcome.responses) {
          count(response.status);
          note(checkAnswer(request, response, foreign), request);
        }
      }
      if (performance.now() - lastReport > 10_000) {
        lastReport = performance.now();
        console.log(
          `${figures.requests} requests, ${Math.round(figures.requests / ((lastReport - started) / 1000))}/s, findings: ${figures.serverErrors + figures.nonJsonApiErrors + figures.leaks + figures.crossWorkspace}`,
        );
      }
    }
  }
  await Promise.all(Array.from({ length: settings.connections }, () => worker()));
  const durationSeconds = (performance.now() - started) / 1000;

  const health = await send({ method: 'GET', url: '/healthz', headers: {} }).catch((error) => ({ status: 0, body: String(error) }));
  const alive = { healthz: health.status, processRunning: server.child.exitCode === null && server.child.signalCode === null };
  await pool.close();
  server.child.kill('SIGTERM');
  const exit = await server.exited;
  fs.rmSync(server.dataDir, { recursive: true, force: true });

  const report = {
    settings,
    machine,
    durationSeconds: Number(durationSeconds.toFixed(1)),
    requestsPerSecond: Math.round(figures.requests / durationSeconds),
    operations: ctx.operations.map((op) => `${op.method} ${op.path}`),
    figures,
    server: { alive, exit, logLines: server.log.lines, errorLogLines: server.log.errors, errorLogSamples: server.log.errorSamples },
  };
  const failed =
    figures.serverErrors + figures.nonJsonApiErrors + figures.leaks + figures.crossWorkspace > 0 ||
    alive.healthz !== 200 ||
    !alive.processRunning ||
    exit.code !== 0;
  report.verdict = failed ? 'FAIL' : 'PASS';
  writeReport(report);
  console.log(
    `${report.verdict}: ${figures.requests} requests in ${report.durationSeconds} s; 5xx ${figures.serverErrors}, non-JSON:API errors ${figures.nonJsonApiErrors}, leaks ${figures.leaks}, cross-workspace ${figures.crossWorkspace}`,
  );
  if (failed) process.exitCode = 1;
}

function writeReport(report) {
  const dir = path.join(here, 'results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'fuzz.json'), `${JSON.stringify(report, null, 2)}\n`);
  const { figures, settings: s, machine: m } = report;
  const statuses = Object.entries(figures.byStatus).sort(([a], [b]) => String(a).localeCompare(String(b)));
  const list = (items) =>
    items.length === 0
      ? 'none'
      : items
          .map(
            (item) =>
              `\n  - \`${String(typeof item === 'string' ? item : `${item.kind}: ${item.detail} <- ${item.request}`)
                .replaceAll('`', "'")
                .slice(0, 400)}\``,
          )
          .join('');
  fs.writeFileSync(
    path.join(dir, 'fuzz.md'),
    `# Fuzz run (${report.verdict})

| figure | value |
| --- | --- |
| requests answered | ${figures.requests.toLocaleString('en-US')} |
| 5xx answers | ${figures.serverErrors} |
| 4xx answers that are not a JSON:API error document | ${figures.nonJsonApiErrors} |
| answers showing the other workspace's data | ${figures.leaks} |
| cross-workspace pairs answering unlike unknown ids (or not 404) | ${figures.crossWorkspace} of ${figures.crossPairs.toLocaleString('en-US')} pairs |
| raw-socket cases | ${figures.rawCases.toLocaleString('en-US')} (closed with a reset or not at all: ${figures.rawUnclean}) |
| requests the HTTP client refused to send / network errors | ${figures.clientRefused} / ${figures.networkErrors} |
| server alive afterwards | /healthz ${report.server.alive.healthz}, process ${report.server.alive.processRunning ? 'running' : 'gone'}; exit code after SIGTERM ${report.server.exit.code} |
| server error log lines (pino level 50+) | ${report.server.errorLogLines} |
| duration | ${report.durationSeconds} s (${report.requestsPerSecond.toLocaleString('en-US')} requests/s) |

By status: ${statuses.map(([status, n]) => `${status}: ${n.toLocaleString('en-US')}`).join(', ')}.

Findings: ${list(figures.samples.findings)}

Refused by the client: ${list(figures.samples.clientRefused)}

Network errors: ${list(figures.samples.networkErrors)}

Raw cases closed uncleanly: ${list(figures.samples.rawUnclean)}

Raw cases closed with no answer: ${list(figures.samples.noAnswer)}

Found by earlier runs and fixed: ${list(EARLIER_FINDS)}

Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB, ${m.os}, Node ${m.node}; load average before the run ${m.loadAverage.join(' / ')}.
Run: ${s.date}, code ${s.code ? `${s.code.commit}${s.code.srcChanged ? ' with uncommitted changes in src/' : ''}` : 'unknown'}; seed ${s.seed} (\`FUZZ_SEED=${s.seed} npm run bench:fuzz\` replays the generated sequence; answers
depend on the order in which ${s.connections} connections interleave); ${s.connections} connections.

## How it was measured

- \`npm run bench:fuzz\` compiles \`src/\` to \`dist/\` and runs \`bench/fuzz.mjs\` under tsx, which shares the
  generators and checks of the fuzz test (\`test/support/fuzz/\`; the short run is \`test/fuzz.test.ts\` in
  \`npm test\`). The server is the real \`node dist/main.js serve\` in a child process, on 127.0.0.1, a fresh temporary
  data dir (embedded SQLite) removed afterwards, \`SWITCHYARD_API_RATE_LIMIT=0\` and \`SWITCHYARD_WEBHOOK_RATE_LIMIT=0\`,
  everything else at its defaults (its request log is read and dropped; error lines are counted).
- Two Pro workspaces: \`default\` (the first-start token, plus a read token from \`switchyard token create\`) and
  \`other\`, created with the CLI; a free-plan workspace's token is used too. Each is seeded through the API with two
  folders, three workflows (two with a webhook -> set graph, one active) and three executions; every name in
  \`other\` carries a random marker.
- The operations are read from \`/api/docs/openapi.json\` as the server publishes it (${report.operations.length}
  operations). Requests are drawn in batches of ${s.batch} with fast-check (\`fc.sample\`, seed + batch number):
  ${s.mix.generated}% generated requests (an operation's method, or another; path parameters valid, of the other
  workspace, unknown or oddly encoded: \`%00\`, \`%2F\`, \`..\`, invalid UTF-8, 8,193+ bytes, unicode; list queries
  with \`filter\`, \`sort\`, \`page\`, \`fields\`, \`include\` and unknown parameters; \`Accept\`, \`Content-Type\` and
  \`Authorization\` variants; bodies: valid envelopes derived from the schemas, mutated ones, non-JSON bytes,
  oversized and deeply nested ones; sometimes a path the document does not list), ${s.mix.crossWorkspacePairs}%
  cross-workspace pairs (a well-formed request with the first workspace's token naming the other's ids, and its
  twin naming unknown ids; both count as requests), and ${s.mix.rawSocket}% raw-socket cases (heads over 16 KiB,
  malformed request lines and headers, contradictory framing, broken chunked bodies), each on its own connection.
- Generated requests go over ${s.connections} keep-alive connections (an undici \`Pool\`, no pipelining).
- Every answer is checked: no 5xx; a 4xx carries \`application/vnd.api+json\` and validates against the JSON:API
  1.0 schema with \`errors[]\` of the answer's status, each with a code, a title and a detail; no answer holds the
  other workspace's marker, or one of its ids that the fuzz has not itself sent before; a pair's two answers are the
  same (the unknown id standing in for the other's), and 404 \`not_found\` when the other's id is in the path.
- Afterwards \`/healthz\` must answer 200 and the process must still run; SIGTERM must then stop it with exit code 0.
`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
