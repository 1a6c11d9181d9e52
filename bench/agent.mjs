// `npm run bench:agent`: the agent step's own overhead per model turn, with an instant fake
// provider. Builds nothing itself (the npm script runs `npm run build` first).
//
// Main rows: `switchyard serve` as users run it (agent/serve-runs.mjs: lib/spawn-serve.mjs, a
// fresh SQLite data dir, log level info), set up through the public API (an `openai_compatible`
// connection to the instant provider, a webhook -> agent workflow, activated), runs sent one at a
// time to the workflow's webhook (`last_step`: the caller gets the agent's answer). Extra INFO
// rows: the engine in this process, no HTTP layer (agent/in-process-runs.mjs; BENCH_IN_PROCESS=0
// leaves them out). The instant provider (agent/instant-provider.mjs) runs in this process.
//
// Per execution, from the microsecond timestamps the engine stores (agent/overhead.mjs):
//   overhead per turn = (agent step span - sum of model_call spans - sum of tool_call spans) / turns
// A model_call span runs from before the connection look-up to the answer (connection row read,
// key opened, SDK request and response over loopback); a tool_call span covers the tool's own
// request. What is left is the agent's work around them: prompt and tool schemas, the journal
// commit of every model turn and tool call, argument validation, the step's own rows.
//
// Writes bench/results/agent.{md,json}, except when the serve child is profiled
// (BENCH_CPU_PROF=1: profiles and summaries in results/profiles/; or BENCH_NODE_FLAGS set).
// BENCH_RUNS (default 1,000) and BENCH_WARMUP (default 100) per shape and process: at 300 runs the
// p99 was the third-slowest run, which one stall of the shared machine decided.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineFacts } from './lib/machine.mjs';
import { codeVersion, describeCode } from './lib/code-version.mjs';
import { benchNodeFlags } from './lib/spawn-serve.mjs';
import { startInstantProvider } from './agent/instant-provider.mjs';
import { measureServe } from './agent/serve-runs.mjs';
import { measureInProcess } from './agent/in-process-runs.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const whole = (name, fallback) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number`);
  return value;
};
const RUNS = whole('BENCH_RUNS', 1000);
const WARMUP = whole('BENCH_WARMUP', 100);
const IN_PROCESS = process.env.BENCH_IN_PROCESS !== '0';
const PROFILE_DIR = process.env.BENCH_CPU_PROF === '1' ? path.join(here, 'results', 'profiles') : undefined;
const PROFILED = PROFILE_DIR !== undefined || benchNodeFlags().length > 0;
const TARGET_P99_MS = 3;
const log = (line) => process.stdout.write(`${line}\n`);
const load = () => os.loadavg().map((value) => Number(value.toFixed(2)));

async function main() {
  const loadBefore = load();
  const provider = await startInstantProvider();
  try {
    const serve = await measureServe({ provider, runs: RUNS, warmup: WARMUP, log, profileDir: PROFILE_DIR });
    const loadAfterServe = load();
    const inProcess = IN_PROCESS ? await measureInProcess({ provider, runs: RUNS, warmup: WARMUP, log }) : null;
    const loadAfter = load();
    const run = { loadBefore, loadAfterServe, loadAfter, serve, inProcess, providerRequests: { ...provider.requests } };
    if (PROFILED) {
      log(
        `Results not written (the serve child ran with ${PROFILE_DIR ? 'BENCH_CPU_PROF=1' : `BENCH_NODE_FLAGS=${process.env.BENCH_NODE_FLAGS}`}).`,
      );
      for (const file of serve.server.profiles) log(`profile: ${file} (summary beside it, .txt)`);
      return;
    }
    report(run);
  } finally {
    await provider.close();
  }
}

function report({ loadBefore, loadAfterServe, loadAfter, serve, inProcess, providerRequests }) {
  const machine = machineFacts();
  const code = codeVersion();
  const loadText = (values) => values.map((v) => v.toFixed(2)).join(' / ');
  const ms = (v) => `${v.toFixed(3)} ms`;
  const worst = Math.max(serve.results[1].overheadPerTurnMs.p99, serve.results[3].overheadPerTurnMs.p99);
  const pass = worst <= TARGET_P99_MS;
  const date = new Date().toISOString();
  const json = {
    date,
    code,
    runs: RUNS,
    warmup: WARMUP,
    targetP99Ms: TARGET_P99_MS,
    machine,
    loadAverageBefore: loadBefore,
    loadAverageAfterServe: loadAfterServe,
    loadAverageAfter: loadAfter,
    serve: {
      command: serve.server.command,
      env: serve.server.env,
      deliveries: serve.deliveries,
      extraStepReads: serve.extraReads,
      log: {
        bytes: serve.server.log.bytes,
        lines: serve.server.log.lines,
        byLevel: serve.server.log.byLevel,
        errors: serve.server.log.errors,
      },
      shutdownMs: serve.server.shutdownMs,
      results: serve.results,
    },
    inProcess: inProcess ? { results: inProcess } : null,
    providerRequests,
    pass,
  };
  writeFileSync(path.join(here, 'results', 'agent.json'), `${JSON.stringify(json, null, 2)}\n`);

  const row = (process, results, turns) => {
    const r = results[turns];
    const answer = r.answerMs ? `${ms(r.answerMs.p50)} / ${ms(r.answerMs.p99)}` : '-';
    return `| ${process} | ${turns} | ${ms(r.overheadPerTurnMs.p50)} | ${ms(r.overheadPerTurnMs.p99)} | ${ms(r.stepMs.p50)} | ${ms(r.modelCallMs.p50)} | ${turns > 1 ? ms(r.toolCallMs.p50) : '-'} | ${answer} |`;
  };
  const stretch = (process, results, turns) => {
    const r = results[turns];
    const pair = (figures) => `${ms(figures.p50)} / ${ms(figures.p99)}`;
    return `| ${process} | ${turns} | ${pair(r.beforeFirstCallMs)} | ${turns > 1 ? pair(r.betweenCallsMs) : '-'} | ${pair(r.afterLastCallMs)} |`;
  };
  // Whether the slowest runs were slow throughout (the model calls too: the process or machine
  // stalled) or only in the agent's own stretches.
  const stalls = [1, 3].map((turns) => {
    const r = serve.results[turns];
    const slowModel = r.worstRuns.reduce((sum, run) => sum + run.modelMs, 0) / r.worstRuns.length;
    return `${turns} turn${turns > 1 ? 's' : ''}: ${(slowModel / r.modelCallMs.p50).toFixed(1)}x`;
  });
  const env = Object.entries(serve.server.env)
    .map(([name, value]) => `\`${name}=${value}\``)
    .join(', ');
  const serveLog = serve.server.log;
  const levels = Object.entries(serveLog.byLevel)
    .map(([level, n]) => `${n.toLocaleString('en')} ${level}`)
    .join(', ');
  const busy = Math.max(loadBefore[0], loadAfterServe[0]) > machine.cores;
  const md = `# Agent step overhead per model turn

\`npm run bench:agent\` (bench/agent.mjs), ${date}${describeCode(code)}.

**Machine:** ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, Node ${machine.node}, ${machine.os}, shared with
other engineers' work. Load average (1 / 5 / 15 min): ${loadText(loadBefore)} before (taken after the \`npm run build\` the
script runs first, whose compile adds to the 1-minute figure), ${loadText(loadAfterServe)} after the serve rows, ${loadText(loadAfter)}
at the end; the benchmark's own two processes (this script with the provider, and serve) add about one.

| process | turns | overhead per turn p50 | overhead per turn p99 | agent step p50 | model_call p50 | tool_call p50 | webhook answer p50 / p99 |
| --- | --- | --- | --- | --- | --- | --- | --- |
${row('serve', serve.results, 1)}
${row('serve', serve.results, 3)}
${inProcess ? `${row('in-process (INFO)', inProcess, 1)}\n${row('in-process (INFO)', inProcess, 3)}\n` : ''}
Where the overhead lies (p50 / p99 of each stretch of a run): before the first model call (the step's start, its tools'
schemas, the prompt), between two calls (per gap: the previous call's journal commit, a tool call's argument check), and after the
last call (its journal commit, the output, the step's own end):

| process | turns | before the first call | between two calls (each) | after the last call |
| --- | --- | --- | --- | --- |
${stretch('serve', serve.results, 1)}
${stretch('serve', serve.results, 3)}
${inProcess ? `${stretch('in-process (INFO)', inProcess, 1)}\n${stretch('in-process (INFO)', inProcess, 3)}\n` : ''}
In the five slowest runs of each serve row, the model calls took on average this many times their p50 (${stalls.join(', ')}):
well above 1x means the whole process was slowed in those runs (a core taken by other work, a garbage collection), not only
the agent's own stretches; near 1x, the agent's own work was the slow part. The slowest runs with their stretches are in
agent.json (\`worstRuns\`).

**Target**, judged on the serve rows: p99 of the overhead per model turn at most ${TARGET_P99_MS} ms: **${pass ? 'PASS' : 'FAIL'}** (worst p99 ${ms(worst)}).

${
  busy
    ? `**Reading these figures:** the 1-minute load average (${Math.max(loadBefore[0], loadAfterServe[0]).toFixed(1)}) was above the core count (${machine.cores}) around the serve rows: runnable processes waited for a core, and those waits land in whichever span they interrupt, so the p99 partly measures the scheduler. Re-run on a quiet machine before deciding on it.

`
    : ''
}## How it was measured

**Serve (the main rows):** \`${serve.server.command}\` (bench/lib/spawn-serve.mjs) on a fresh data dir (embedded SQLite, generated
secret key), log level \`info\` (one access line per request), with only ${env} set beyond
\`SWITCHYARD_DATA_DIR\`, \`PORT\` and \`HOST=127.0.0.1\`. The allow-list because the instant provider and its tool listen on loopback,
which the private-address guard refuses otherwise (docs/agents.md); the API limit (600 requests a minute per token by default)
raised because the run reads every execution's steps through the API, one request per run (${serve.deliveries.toLocaleString('en')}), which at a few
milliseconds a run passes 600 a minute: the limiter is on and counting, never refusing. ${serve.server.env.SWITCHYARD_WEBHOOK_RATE_LIMIT ? `The webhook limit raised too, as ${serve.deliveries.toLocaleString('en')} deliveries could pass its default 6,000 a minute.` : `The webhook limit at its default (6,000 deliveries a minute per address): the run sends ${serve.deliveries.toLocaleString('en')}.`}
Its log: ${serveLog.bytes.toLocaleString('en')} bytes, ${serveLog.lines.toLocaleString('en')} lines (${levels}), no error line; it exited with code 0 ${serve.server.shutdownMs} ms after SIGTERM.

Set-up through the public API with the printed first-start token, as a user does it: \`POST /api/v1/connections\` (\`openai_compatible\`, \`base_url\` the instant
provider's \`/v1\`, an API key), \`POST /workflows\`, \`PUT /workflows/:id/graph\` (webhook with \`response_mode: last_step\` and the default
bearer verification -> agent with one HTTP tool \`ping\`), \`POST /workflows/:id/activate\`. Each run is one \`POST /webhooks/<webhook_id>\` with the
bearer token and \`{"text":"turns=N"}\` (fetch, keep-alive), which answers 200 with the agent's output once the run ended; a user who wants
the agent's answer calls it this way (\`POST /workflows/:id/run\` answers only the execution id). The parent then reads the agent node's
rows through \`GET /api/v1/executions/<X-Execution-Id>/steps?filter[node_id]=agent\` (${serve.extraReads === 0 ? "every run's agent step was completed at the first read" : `${serve.extraReads} extra reads, 5 ms apart, until the agent step showed completed`}), as a user would,
before it sends the next run; the reads are not timed. It does not read the server's SQLite file: a second process on the database
slowed the server's one-turn figure (bench/agent/serve-runs.mjs has the comparison).

**In-process (INFO rows, not what users run):** ${inProcess ? "buildDeps over a SQLite file in this script's process, no HTTP layer and so no logger, the same graph run as a draft through the service call behind `POST /run`, each awaited with `engine.idle()`." : 'left out (`BENCH_IN_PROCESS=0`).'}

**Both:** a local HTTP server in the bench's process answers the OpenAI Chat Completions protocol at once (and the tool at \`POST /tool\`);
the agent step reaches it through the official \`openai\` SDK as in production. Two shapes: one turn (the model answers at once), and three
turns (two turns each calling the HTTP tool, then the answer). Per shape and process, ${WARMUP} warm-up runs (discarded), then
${RUNS} measured runs one after another (${providerRequests.chat.toLocaleString('en')} model requests and ${providerRequests.tool.toLocaleString('en')} tool requests in all).
${inProcess ? 'Serve rows first, then the in-process rows.' : ''}

From the microsecond timestamps the engine stores: overhead per turn = (agent step span - model_call spans - tool_call spans) / turns.
A model_call span covers the connection look-up (a row read and the key opened), the SDK request and its answer over loopback; a tool_call
span covers the tool's request. What is left is the agent's own work: prompt, tool schemas, argument validation against the tool's schema
(ajv), and the durable journal: every model turn and tool call is committed as its own execution-step row before the loop goes on (one
SQLite commit each). The webhook answer column is the client's time from send to the last byte of the answer: the whole run as the
caller sees it, HTTP, verification, admission and logging included.

Raw figures (mean, p90, min, max, and the five slowest runs of each row split into these stretches) are in agent.json.
`;
  writeFileSync(path.join(here, 'results', 'agent.md'), md);
  log(md);
}

await main();
