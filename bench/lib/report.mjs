// Writes the foundation results as a Markdown page for people and a JSON file with the raw numbers.
import fs from 'node:fs';
import path from 'node:path';
import { describeCode } from './code-version.mjs';

const verdict = (pass) => (pass ? 'PASS' : 'FAIL');
/** autocannon records latency in whole milliseconds, so 0 means under one. */
const ms = (value) => (value === 0 ? '<1 ms' : `${value} ms`);
const whole = (value) => Math.round(value).toLocaleString('en-US');
const percent = (value) => `${(value * 100).toFixed(1)}%`;
const cell = (text) => String(text).replaceAll('|', '\\|');

export const PROCESS_LABELS = {
  bare: 'bare baseline',
  serve: '`switchyard serve`, defaults (log level `info`, stdout and stderr to a file)',
  'in-process': 'in-process, logger off (not what users run)',
};

/** "12.3 MB" */
export function megabytes(bytes) {
  return `${(bytes / 1e6).toFixed(bytes < 1e6 ? 2 : 1)} MB`;
}

function resultsTable(results, goals) {
  const lines = [
    '| target | process | req/s (median) | p50 | p99 (median / worst) | ratio to bare Fastify (median) | ratio to bare node:http (median) | PASS/FAIL |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const [id, r] of Object.entries(results)) {
    const own = goals.filter((goal) => goal.target === id);
    const status =
      r.process === 'bare'
        ? 'baseline'
        : r.process === 'in-process'
          ? 'extra row (not judged)'
          : own.length === 0
            ? 'informational'
            : own.map((goal) => `${verdict(goal.pass)} (${goal.short})`).join(', ');
    lines.push(
      `| ${cell(r.label)} | ${PROCESS_LABELS[r.process]} | ${whole(r.requestsPerSecond)} | ${ms(r.p50)} | ${ms(r.p99)} / ${ms(r.worstP99)} | ${percent(r.ratio)} | ${percent(r.ratioNodeHttp)} | ${status} |`,
    );
  }
  return lines.join('\n');
}

function roundsTable(results) {
  const count = Object.values(results)[0].rounds.length;
  const lines = [
    `| target | ${Array.from({ length: count }, (_, i) => `round ${i + 1}: req/s (ratio to bare Fastify, p99)`).join(' | ')} |`,
    `| --- | ${Array.from({ length: count }, () => '---:').join(' | ')} |`,
  ];
  for (const [id, r] of Object.entries(results)) {
    lines.push(
      `| \`${id}\` | ${r.rounds.map((round) => `${whole(round.requestsPerSecond)} (${percent(round.ratio)}, ${ms(round.p99)})`).join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

function logTable(results) {
  const lines = [
    '| target | log size | lines | by level | requests served | log per request | shutdown on SIGTERM |',
    '| --- | ---: | ---: | --- | ---: | ---: | ---: |',
  ];
  for (const [id, r] of Object.entries(results)) {
    if (!r.log) continue;
    const levels = Object.entries(r.log.byLevel)
      .map(([level, n]) => `${level} ${whole(n)}`)
      .join(', ');
    lines.push(
      `| \`${id}\` | ${megabytes(r.log.bytes)} | ${whole(r.log.lines)} | ${levels || 'none'}${r.log.errors ? `; **${r.log.errors} errors**` : ''}${r.log.afterStart ? `; ${r.log.afterStart} plain lines after the start` : ''} | ${whole(r.requestsServed)} | ${whole(r.log.bytesPerRequest)} bytes | ${whole(r.shutdownMs)} ms, exit code 0 |`,
    );
  }
  return lines.join('\n');
}

function markdown({ machine, settings, results, goals }) {
  const goalLines = goals.map(
    (goal) => `| ${cell(results[goal.target].label)} | ${goal.goal} | ${goal.measured} | ${verdict(goal.pass)} |`,
  );
  const serve = Object.values(results).find((r) => r.process === 'serve');
  return `# Foundation benchmark

${resultsTable(results, goals)}

Goals, judged on the \`switchyard serve\` rows only:

| target | goal | measured | result |
| --- | --- | --- | --- |
${goalLines.join('\n')}

Every round:

${roundsTable(results)}

What each \`switchyard serve\` child logged over the whole run (warm-up and rounds; its stdout
and stderr went to \`serve.log\` in its temporary data dir, removed afterwards), and how long it
took to shut down:

${logTable(results)}

Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, ${machine.os}, Node ${machine.node}; load average before the run ${machine.loadAverage.join(' / ')}.
Run: ${settings.date}${describeCode(settings.code)}; ${settings.rounds} rounds of ${settings.durationSeconds} s per target (after one ${settings.warmupSeconds} s warm-up per server), ${settings.connections} connections.
Raw numbers: [foundation.json](foundation.json).

## How it was measured

- \`npm run bench\` compiles \`src/\` to \`dist/\` with tsc and runs \`bench/run.mjs\`.
- **The process measured is the product as shipped**: \`${serve?.command ?? 'node dist/main.js serve'}\`, started by
  \`bench/lib/spawn-serve.mjs\` as a child process with the defaults a user gets: log level \`info\`
  (every request logged by pino, authorization headers redacted), stdout and stderr appended to a
  file, the engine started, embedded SQLite (WAL) in a fresh temporary data dir. Its environment is
  the shell's without any Switchyard, \`DATABASE_URL\`, \`PG*\`, \`PORT\`/\`HOST\` or \`NODE_OPTIONS\`
  variable, plus \`SWITCHYARD_DATA_DIR\`, \`PORT\` (a free port), \`HOST=127.0.0.1\` and only what the
  row names. The parent waits for its "listening on" line, reads the first-start token it prints,
  and in the end stops it with SIGTERM and requires exit code 0.
- Rate limit: the default, 600 requests a minute per token, would refuse nearly every request of
  a load test, so the judged rows run with \`SWITCHYARD_API_RATE_LIMIT=10000000\`: the limiter is
  on and counts every request, as in production, but never refuses. The \`me-limiter-off\` row
  (\`=0\`) shows what the limiter costs; it has no goal.
- Beside it, in the same run: bare node:http answering \`{"hello":"world"}\`
  (\`bench/servers/bare-node-http.mjs\`) and bare Fastify 5 (\`bench/servers/bare-fastify.mjs\`,
  logger off), the ceilings of this machine, Node version and load generator; and, as extra rows
  that are not judged, the in-process wiring (\`bench/servers/switchyard.mjs\`: \`loadConfig\`,
  \`buildDeps\`, \`bootstrap\`, \`buildApp\` in the bench's own script with \`logger: false\`, the rate
  limit off and the engine not started), which is not what users run.
- Every target has its own server in its own child process on 127.0.0.1; autocannon 8 runs in the
  parent, so the load generator and a server never share an event loop. They all share the
  machine's ${machine.cores} cores. All servers start first and stay up; then every target is measured in
  turn, and that is repeated for ${settings.rounds} rounds. Each round's ratios divide by that round's bare
  runs, and the tables report the median over rounds: on this shared machine bare Fastify alone
  has drifted between 13,000 and 35,000 req/s from one minute to the next.
- The list targets' workspace holds ${settings.workflows.toLocaleString('en-US')} workflows, inserted before \`serve\` starts by a
  short separate process on the same data dir (\`bench/lib/seed-data-dir.mjs\`: \`buildDeps\`, the
  first-start \`bootstrap\`, whose token the benchmark then uses, and \`bench/lib/seed-workflows.mjs\`:
  the row shape the service writes, graphs of 3, 6, 12 and 24 nodes normalised and laid out by the
  same code as \`PUT /graph\`, one in four active with its snapshot, all in one transaction). The
  request is the default page: the 50 newest, default fieldset, cursor link to the next page.
- Caches, as in production on SQLite: token look-ups and serialised list answers are kept in the
  process while the tables they read are unchanged (see docs/architecture.md). Nothing writes
  during the load, so after the first request the list is served from the cache. The
  \`workflows-uncached\` row turns the cache off from outside, without changing the product: the
  cache keys an answer by its URL and keeps the 1,000 most recent, and the row sends the same
  request, \`?page[limit]=50\` (the default page), spelt ${settings.uncachedPaths.toLocaleString('en-US')} ways in turn (each letter and digit
  plain or percent-encoded; \`bench/lib/uncached-list-paths.mjs\`), so every request misses and
  runs the query, reads the rows and serialises them. It has no goal.
- Requests carry the token as \`Authorization: Bearer\` and \`Accept: application/vnd.api+json\`.
  Before the load, one request checks the answer (status 200 and the expected body). Then a
  warm-up run (discarded) and the measured runs, all ${settings.connections} connections, no pipelining. Any
  error, timeout or non-2xx answer stops the benchmark with an error, and so does an error in a
  server's log or a server that does not exit 0 on SIGTERM.
- req/s is autocannon's mean of per-second samples; p50/p99 are its latency percentiles, which it
  records in whole milliseconds. The ratios divide a target's req/s by bare Fastify's and bare
  node:http's in the same round.
`;
}

/** Writes foundation.md and foundation.json into `dir`; returns their paths. */
export function writeReport(dir, report) {
  fs.mkdirSync(dir, { recursive: true });
  const md = path.join(dir, 'foundation.md');
  const json = path.join(dir, 'foundation.json');
  fs.writeFileSync(md, markdown(report));
  fs.writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  return [md, json];
}
