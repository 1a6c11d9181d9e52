// Writes the stores benchmark's results: stores.md for people, stores.json with the raw numbers.
import fs from 'node:fs';
import path from 'node:path';
import { describeCode } from './code-version.mjs';
import { describeServeRun } from './suite-report.mjs';

const cell = (text) => String(text).replaceAll('|', '\\|');
const whole = (value) => Math.round(value).toLocaleString('en-US');

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
