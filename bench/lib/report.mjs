// Writes the results as a Markdown page for people and a JSON file with the raw numbers.
import fs from 'node:fs';
import path from 'node:path';

const verdict = (pass) => (pass ? 'PASS' : 'FAIL');
/** autocannon records latency in whole milliseconds, so 0 means under one. */
const ms = (value) => (value === 0 ? '<1 ms' : `${value} ms`);

function resultsTable(results, goals) {
  const lines = ['| target | req/s (median) | p50 | p99 (median / worst) | ratio to bare Fastify (median) | PASS/FAIL |', '| --- | ---: | ---: | ---: | ---: | --- |'];
  for (const [id, r] of Object.entries(results)) {
    const own = goals.filter((goal) => goal.target === id);
    const status = id === 'bare' ? 'baseline' : own.length === 0 ? 'informational' : own.map((goal) => `${verdict(goal.pass)} (${goal.short})`).join(', ');
    lines.push(`| ${r.label} | ${Math.round(r.requestsPerSecond).toLocaleString('en-US')} | ${ms(r.p50)} | ${ms(r.p99)} / ${ms(r.worstP99)} | ${(r.ratio * 100).toFixed(1)}% | ${status} |`);
  }
  return lines.join('\n');
}

function roundsTable(results) {
  const ids = Object.keys(results);
  const count = results[ids[0]].rounds.length;
  const lines = [`| round | ${ids.map((id) => `${id} req/s (ratio, p99)`).join(' | ')} |`, `| --- | ${ids.map(() => '---:').join(' | ')} |`];
  for (let i = 0; i < count; i += 1) {
    const cells = ids.map((id) => {
      const r = results[id].rounds[i];
      return `${Math.round(r.requestsPerSecond).toLocaleString('en-US')} (${(r.ratio * 100).toFixed(1)}%, ${ms(r.p99)})`;
    });
    lines.push(`| ${i + 1} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

function markdown({ machine, settings, results, goals }) {
  const goalLines = goals.map((goal) => `| ${results[goal.target].label} | ${goal.goal} | ${goal.measured} | ${verdict(goal.pass)} |`);
  return `# Foundation benchmark

${resultsTable(results, goals)}

| target | goal | measured | result |
| --- | --- | --- | --- |
${goalLines.join('\n')}

Every round:

${roundsTable(results)}

Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, ${machine.os}, Node ${machine.node}.
Run: ${settings.date}, ${settings.rounds} rounds of ${settings.durationSeconds} s per target (after one ${settings.warmupSeconds} s warm-up per server), ${settings.connections} connections.
Raw numbers: [foundation.json](foundation.json).

## How it was measured

- \`npm run bench\` compiles \`src/\` to \`dist/\` with tsc and runs \`bench/run.mjs\`, so the code under
  load is the code production runs.
- Each target gets its own server in its own child process (\`bench/servers/\`), listening on
  127.0.0.1 on a free port; autocannon 8 runs in the parent process, so the load generator and the
  server never share an event loop. Both share the machine's ${machine.cores} cores.
- All servers start first and stay up; then every target is measured in turn, and that is repeated
  for ${settings.rounds} rounds. Each round's ratio divides by that round's bare run, and the tables report the
  median over rounds: on this shared machine bare Fastify alone drifted between 17,000 and
  35,000 req/s from one minute to the next, far more than the differences being measured.
- Switchyard is wired as \`switchyard serve\` wires it (\`loadConfig\`, \`buildDeps\`, first-start
  \`bootstrap\`, \`buildApp\`) with \`logger: false\` and the API rate limit off, on embedded SQLite
  (WAL) in a temporary data dir, authenticated with the build-scoped token \`bootstrap\` mints and
  \`Accept: application/vnd.api+json\`.
- The list target's workspace holds ${settings.workflows.toLocaleString('en-US')} workflows inserted in one transaction
  before the server listens (\`bench/lib/seed-workflows.mjs\`): the row shape the service writes,
  graphs of 3, 6, 12 and 24 nodes normalised and laid out by the same code as \`PUT /graph\`, one
  in four active with its snapshot. The request is the default page: the 50 newest, default
  fieldset, cursor link to the next page.
- Caches, as in production on SQLite: token look-ups and serialised list answers are kept in the
  process while the tables they read are unchanged (checked per request against this process's
  writes and SQLite's \`data_version\` for other processes' commits; see docs/architecture.md).
  Nothing writes during the load, so after the first request the list is served from the cache.
  The \`workflows-uncached\` row runs the same request with the list cache off, to show the cost
  of the query and serialisation themselves; it has no goal.
- Before the load, one request checks the answer (status 200 and the expected body). Then a
  warm-up run (discarded) and the measured runs, all ${settings.connections} connections, no pipelining. Any
  error, timeout or non-2xx answer stops the benchmark with an error.
- req/s is autocannon's mean of per-second samples; p50/p99 are its latency percentiles, which it
  records in whole milliseconds. Ratio is the target's req/s divided by bare Fastify's in the same run.
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
