// Writes the stores benchmark's results: stores.md for people, stores.json with the raw numbers.
import fs from 'node:fs';
import path from 'node:path';
import { describeCode } from './code-version.mjs';
import { describeServeRun } from './suite-report.mjs';

const cell = (text) => String(text).replaceAll('|', '\\|');
const whole = (value) => Math.round(value).toLocaleString('en-US');
/** Issue 36's three consecutive full runs, as they were measured (stores.md of each). */
const ISSUE_36_RUNS =
  'runs 2, 3 and 4 of four (run 1, with bare Fastify at 25,749 req/s on a busy machine, had the PUT at 4,470 rows/s, the first page p99 6.741 ms, restore +30.8 MB): PUT at 16 connections 7,675 / 6,027 / 7,366 rows/s (bare Fastify 46,531 / 36,315 / 46,378 req/s); first page p99 4.024 / 4.435 / 3.977 ms (p50 1.25 / 1.254 / 1.134 ms); restore RSS growth +35.7 / +35.5 / +35.6 MB. The last of them is the one this file reports';

function markdown({ machine, machineAfter, settings, servers, rows, sections }) {
  const table = [
    '| benchmark | process | goal | measured | result |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${cell(row.benchmark)} | ${row.process} | ${cell(row.goal)} | ${cell(row.measured)} | ${row.verdict} |`),
  ];
  const details = sections.map(
    (section) => `### ${section.number}. ${section.title} (${section.process})\n\n${section.details.map((line) => `- ${line}`).join('\n')}`,
  );
  const logs = Object.entries(servers).map(
    ([id, server]) => `- **${server.database}** (\`${id}\`): ${describeServeRun(server).replaceAll('\n', ' ')}`,
  );
  const env = Object.values(servers)[0]?.env ?? {};
  const { targets } = settings;
  return `# Stores benchmark

${table.join('\n')}

Process: \`serve, SQLite\` and \`serve, PostgreSQL\` = \`switchyard serve\` at its defaults (log level
\`info\`, log to a file), both rate limits at 10,000,000/min, on embedded SQLite or on a fresh
PostgreSQL database; \`bare\` = bare baseline. PASS/FAIL against the goal of issue 12; the rows/s
goals of the PUT and restore rows are SQLite's, so on PostgreSQL those rows are INFO with SQLite's
goal in brackets; INFO rows have no goal of their own; ERROR: the benchmark could not measure
(the command then fails).${settings.postgres ? '' : ' PostgreSQL was not measured in this run (no BENCH_DATABASE_URL or SWITCHYARD_TEST_DATABASE_URL).'}

What serve logged, per database:

${logs.join('\n')}

## Details

${details.join('\n\n')}

Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, ${machine.os}, Node ${machine.node}.
Load average (1/5/15 min) before the run ${machine.loadAverage.join(' / ')}, after it ${machineAfter.join(' / ')}.
Run: ${settings.date}${describeCode(settings.code)}; ${whole(settings.rows)} rows; load phases of ${settings.durationSeconds} s after ${settings.warmupSeconds} s of warm-up; page ${whole(settings.page)} of ${settings.pageLimit} rows.
Raw numbers: [stores.json](stores.json).

## What changed (issue 36)

Three goals were missed in the last run committed before (stores.md of aae6bf6, bare Fastify
48,234 req/s): PUT at 16 connections 3,748 rows/s (goal 5,000), the first page p99 12.788 ms (p50
1.81 ms; goal 10 ms), and in an earlier run the restore's RSS growth +119.4 MB (goal 100 MB; the
restore change 73d1877 had brought it to +19.8 MB). CPU profiles of serve (\`BENCH_CPU_PROF=1\`,
now supported by this suite, with \`BENCH_ONLY=1\` and \`BENCH_ONLY=4\`) showed where the time went:

- **PUT**: 0.307 ms of the main thread per write (profiled). The COMMIT of the transaction each
  write had to itself was 42 µs of it, the store's read that opens each transaction 27 µs, BEGIN
  4 µs: 23% in all, per write. Schema validation was not a cost (the compiled validator is cached
  per schema version: under 1%), nor were the row statements (prepared once, 13 µs for the insert).
  **Change**: a group commit for the API's row writes on SQLite
  (\`src/services/stores/row-write-batch.ts\`): the writes arriving in one tick run in arrival
  order in one transaction, each answered after its commit (a 201 still means committed); a
  refused write fails alone, any other failure reruns the batch's writes one transaction each;
  PostgreSQL keeps a transaction per write. Profiled after: 0.169 ms a write, the commit 14 µs and
  the opening read 12 µs a write (the 1-connection writes still commit alone). Alternating
  \`BENCH_ONLY=1\` runs on one build: 3,690 rows/s without, 8,261 rows/s with it (bare Fastify
  46,301 and 43,568 req/s).
- **First page**: 1.37 ms of the main thread per page of 100 rows (profiled), of which the
  query 0.24 ms; parsing each row's stored JSON into objects and the response serializer
  writing them back out string by string, with the garbage it made (GC 7.7% of the time), were
  most of the rest, and the filter definition (parsing the store's schema) was built on every
  request, with or without a filter. The index on (store_id, updated_at, key) was used (one range,
  the row value). **Change**: the page is written as JSON text with each row's stored JSON
  spliced in (\`src/api/routes/stores/feed-document.ts\`, checked byte for byte against the
  serializer's output of the unchanged response schema), and the filter definition is built only
  for a request with a filter. Profiled after: 0.995 ms a page, GC 3.8%. Alternating
  \`BENCH_ONLY=4\` runs (first page, quiet machine): p50 1.054 / 1.456 ms and p99 5.11 / 4.605 ms
  before, p50 0.801 / 1.06 ms and p99 4.023 / 4.569 ms after. The p99 of this row follows the
  machine more than the code: the run before had p90 4.953 ms with a p50 of 1.81 ms.
- **Restore RSS**: nothing changed; the growth (late collection of garbage, diagnosed in
  057425f and fixed in 73d1877) stayed far under the goal in every run since: +31 to +42 MB.

The three full runs in a row after the changes: ${ISSUE_36_RUNS}.

## How it was measured

- \`npm run bench:stores\` compiles \`src/\` to \`dist/\` with tsc and runs \`bench/stores.mjs\`.
- **The process measured is the product as shipped**: \`node dist/main.js serve\`, started by
  \`bench/lib/spawn-serve.mjs\` with the defaults a user gets (log level \`info\`, stdout and stderr
  appended to a file, the engine started, a fresh temporary data dir), an environment without any
  of the shell's Switchyard, \`DATABASE_URL\`, \`PG*\`, \`PORT\`/\`HOST\` or \`NODE_OPTIONS\` variables, plus
  ${Object.entries(env)
    .map(([name, value]) => `\`${name}=${value}\``)
    .join(' and ')} (the limiters on and counting, never refusing) and, for
  PostgreSQL, \`DATABASE_URL\` naming a database created for the run (\`CREATE DATABASE … TEMPLATE
  template0\` on the server of \`BENCH_DATABASE_URL\` or \`SWITCHYARD_TEST_DATABASE_URL\`; serve migrates
  it at its start) and dropped at the end. The build token is the one serve's first start prints.
  serve is stopped with SIGTERM and must exit 0. Bare Fastify 5 and bare node:http
  (\`bench/servers/\`) run beside it for the whole run. The load generators and clients run in the
  parent process; all share the machine's ${machine.cores} cores.
- Every request goes through the HTTP API, as a user's client sends it: autocannon (\`bench/lib/load.mjs\`,
  whole-millisecond latencies) for the loads, \`bench/lib/latency-loop.mjs\` (undici, one request after
  the other, hrtime) for the row list's latencies, node:http streams for the restore and the dump.
- Rows: a schema of four top-level fields (\`status\` enum, \`amount\` number, \`customer\` and \`note\`
  strings, no additional properties), rows of about 200 bytes of JSON; every store has
  \`row_cap\` ${whole(settings.rowCap)}.
- Memory: the server's \`/proc/<pid>/status\` read every ${settings.rssSampleMs} ms in the parent from just before the
  request to its end; the growth is the peak minus that first sample, of VmRSS (the goal's figure)
  and of its parts, RssAnon (heap and native allocations) and RssFile (mapped files: on SQLite the
  database is memory-mapped, \`mmap_size\` 1 GiB, so pages read through the map count in VmRSS).
- Goals: PUT at 16 connections >= ${whole(targets.putRowsPerSecond)} rows/s on SQLite; restore >= ${whole(targets.restoreRowsPerSecond)} rows/s on SQLite
  with the server's RSS growing by at most ${targets.restoreRssMb} MB; dump >= ${whole(targets.dumpRowsPerSecond)} rows/s; row list p99 <= ${targets.listP99Ms} ms
  on the first page and on page ${whole(settings.page)}, one connection.
`;
}

/** Writes stores.md and stores.json into `dir`; returns their paths. */
export function writeStoresReport(dir, report) {
  fs.mkdirSync(dir, { recursive: true });
  const md = path.join(dir, 'stores.md');
  const json = path.join(dir, 'stores.json');
  fs.writeFileSync(md, markdown(report));
  fs.writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  return [md, json];
}
