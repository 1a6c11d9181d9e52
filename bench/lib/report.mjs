// Writes the results as a Markdown page for people and a JSON file with the raw numbers.
import fs from 'node:fs';
import path from 'node:path';

const verdict = (pass) => (pass ? 'PASS' : 'FAIL');

function resultsTable(results, goals) {
  const lines = ['| target | req/s (mean) | p50 | p99 | ratio to bare Fastify | PASS/FAIL |', '| --- | ---: | ---: | ---: | ---: | --- |'];
  for (const [id, r] of Object.entries(results)) {
    const own = goals.filter((goal) => goal.target === id);
    const status = own.length === 0 ? 'baseline' : own.map((goal) => `${verdict(goal.pass)} (${goal.short})`).join(', ');
    lines.push(`| ${r.label} | ${Math.round(r.requestsPerSecond).toLocaleString('en-US')} | ${r.p50} ms | ${r.p99} ms | ${(r.ratio * 100).toFixed(1)}% | ${status} |`);
  }
  return lines.join('\n');
}

function markdown({ machine, settings, results, goals }) {
  const goalLines = goals.map((goal) => `| ${results[goal.target].label} | ${goal.goal} | ${goal.measured} | ${verdict(goal.pass)} |`);
  return `# Foundation benchmark

${resultsTable(results, goals)}

| target | goal | measured | |
| --- | --- | --- | --- |
${goalLines.join('\n')}

Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, ${machine.os}, Node ${machine.node}.
Run: ${settings.date}, ${settings.durationSeconds} s measured after a ${settings.warmupSeconds} s warm-up per target, ${settings.connections} connections.
Raw numbers: [foundation.json](foundation.json).

## How it was measured

- \`npm run bench\` compiles \`src/\` to \`dist/\` with tsc and runs \`bench/run.mjs\`, so the code under
  load is the code production runs.
- Each target gets a fresh server in its own child process (\`bench/servers/\`), listening on
  127.0.0.1 on a free port; autocannon 8 runs in the parent process, so the load generator and the
  server never share an event loop. Both share the machine's ${machine.cores} cores.
- Switchyard is wired as \`switchyard serve\` wires it (\`loadConfig\`, \`buildDeps\`, first-start
  \`bootstrap\`, \`buildApp\`) with \`logger: false\` and the API rate limit off, on embedded SQLite
  (WAL) in a temporary data dir, authenticated with the build-scoped token \`bootstrap\` mints and
  \`Accept: application/vnd.api+json\`.
- The list target's workspace holds ${settings.workflows.toLocaleString('en-US')} workflows inserted in one transaction
  before the server listens (\`bench/lib/seed-workflows.mjs\`): the row shape the service writes,
  graphs of 3, 6, 12 and 24 nodes normalised and laid out by the same code as \`PUT /graph\`, one
  in four active with its snapshot. The request is the default page: the 50 newest, default
  fieldset, cursor link to the next page.
- Before the load, one request checks the answer (status 200 and the expected body). Then a
  warm-up run (discarded) and the measured run, both ${settings.connections} connections, no pipelining. Any
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
