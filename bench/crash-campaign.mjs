// `npm run bench:crash`: the crash campaign of issue 13. On PostgreSQL, one API process and two
// workers (real `node dist/main.js serve --role ...` processes) run a stream of multi-step
// executions started by webhooks (HTTP steps, waits, retries, call_workflow, loops) while a
// worker is killed with SIGKILL at random moments, CRASH_KILLS times (default 200), and
// restarted each time. Then every process is left alone until every execution ends, and the
// database and a side-effect counter are checked:
// - lost: deliveries acknowledged 202 with no execution;
// - unfinished: executions not in a terminal state;
// - completed steps re-run: two completed rows for one node (and loop iteration) of one
//   execution, or an HTTP request beyond the attempts recorded for it: every HTTP step calls a
//   local counter server with its execution, node and iteration in the URL, and is recorded
//   `running` before the request, so a request with no row would be an effect run unseen;
// - re-runs: attempts cut short by a kill (recorded `failed`, code `interrupted`), each
//   followed by a later attempt of the same node.
// Needs BENCH_DATABASE_URL (or SWITCHYARD_TEST_DATABASE_URL): a maintenance database where a
// scratch database is created and dropped. Writes bench/results/crash-campaign.{md,json}.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetch } from 'undici';
import { setTimeout as sleep } from 'node:timers/promises';
import { apiClient, clusterDatabase, edge, node, startRole } from './lib/cluster-procs.mjs';
import { machineFacts } from './lib/machine.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const KILLS = Number(process.env.CRASH_KILLS || 200);
/** The kills stop after this many minutes even if fewer than CRASH_KILLS were made (a worker's start takes 10-20 s on a loaded 2-core machine). */
const BUDGET_MIN = Number(process.env.CRASH_BUDGET_MIN || 60);
const LEASE_MS = Number(process.env.CRASH_LEASE_MS || 2000);
/** Deliveries per second while the campaign runs. */
const RATE = Number(process.env.CRASH_RATE || 6);
const SETTLE_TIMEOUT_MS = Number(process.env.CRASH_SETTLE_S || 900) * 1000;
const WORKER_ENV = {
  SWITCHYARD_LEASE_MS: String(LEASE_MS),
  SWITCHYARD_HEARTBEAT_MS: String(Math.round(LEASE_MS / 4)),
  SWITCHYARD_POLL_MS: '500',
  SWITCHYARD_SHUTDOWN_GRACE_MS: '1000',
};
const random = (from, to) => from + Math.random() * (to - from);

/** The side-effect counter: /hit/<execution>/<node>/<iteration> counts; /flaky/... fails the first call of each key with 500. */
function counterServer() {
  const hits = new Map();
  const server = http.createServer((req, res) => {
    const [, kind, execution, nodeId, iteration] = (req.url ?? '').split('/');
    const key = `${execution}/${nodeId}/${iteration}`;
    const n = (hits.get(key) ?? 0) + 1;
    hits.set(key, n);
    // Some requests take a while, so kills often land with a request in flight.
    const delay = Math.random() < 0.3 ? random(20, 200) : 0;
    setTimeout(() => {
      if (kind === 'flaky' && n === 1) res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"first call fails"}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ key, n }));
    }, delay);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, hits, base: `http://127.0.0.1:${server.address().port}` })),
  );
}

function graphs(base, childId) {
  const hook = node('hook', 'webhook', { response_mode: 'immediate' });
  const hit = (id, iteration = '-') => node(id, 'http', { url: `${base}/hit/{{ execution.id }}/${id}/${iteration}` });
  return {
    chain: {
      nodes: [
        hook,
        hit('a'),
        node('shape', 'code', { code: 'return { n: (input.body && input.body.n) || 0 };' }),
        hit('b'),
        node('done', 'set', { values: { ok: true } }),
      ],
      edges: [edge('hook', 'a'), edge('a', 'shape'), edge('shape', 'b'), edge('b', 'done')],
    },
    waits: {
      nodes: [hook, hit('a'), node('pause', 'wait', { duration_ms: 400 }), hit('b')],
      edges: [edge('hook', 'a'), edge('a', 'pause'), edge('pause', 'b')],
    },
    retries: {
      nodes: [
        hook,
        node(
          'f',
          'http',
          { url: `${base}/flaky/{{ execution.id }}/f/-` },
          { retry: { max_attempts: 4, backoff_ms: 150, backoff: 'fixed' } },
        ),
        hit('b'),
      ],
      edges: [edge('hook', 'f'), edge('f', 'b')],
    },
    calls: {
      nodes: [hook, node('call', 'call_workflow', { workflow_id: childId, input: { n: 1 } }), hit('b')],
      edges: [edge('hook', 'call'), edge('call', 'b')],
    },
    loops: {
      nodes: [hook, node('each', 'loop', { items: [1, 2, 3] }), hit('a', '{{ index }}'), hit('b')],
      edges: [edge('hook', 'each'), edge('each', 'a', 'body'), edge('each', 'b', 'done')],
    },
  };
}

async function main() {
  const counter = await counterServer();
  const database = await clusterDatabase(`sy_bench_crash_${process.pid}`);
  const started = Date.now();
  const api = await startRole('api', database.url, WORKER_ENV);
  const workers = [await startRole('worker', database.url, WORKER_ENV), await startRole('worker', database.url, WORKER_ENV)];
  const client = apiClient(api.address, database.token);
  const child = await client.activeWorkflow('Child', {
    nodes: [
      node('hook', 'webhook'),
      node('ca', 'http', { url: `${counter.base}/hit/{{ execution.id }}/ca/-` }),
      node('done', 'set', { values: { child: true } }),
    ],
    edges: [edge('hook', 'ca'), edge('ca', 'done')],
  });
  const flows = {};
  for (const [name, graph] of Object.entries(graphs(counter.base, child.id))) flows[name] = await client.activeWorkflow(name, graph);
  const names = Object.keys(flows);

  // The stream of deliveries: every 202 names an execution that must exist at the end.
  const acknowledged = new Map();
  const refused = { count: 0, statuses: {} };
  let streaming = true;
  let sent = 0;
  const inFlight = new Set();
  const stream = (async () => {
    while (streaming) {
      const name = names[sent % names.length];
      sent += 1;
      const flow = flows[name];
      const delivery = fetch(flow.hookUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${flow.hookToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ n: sent }),
      })
        .then(async (response) => {
          const text = await response.text();
          if (response.status === 202) acknowledged.set(JSON.parse(text).execution_id, name);
          else {
            refused.count += 1;
            refused.statuses[response.status] = (refused.statuses[response.status] ?? 0) + 1;
          }
        })
        .catch(() => {
          refused.count += 1;
          refused.statuses.network = (refused.statuses.network ?? 0) + 1;
        })
        .finally(() => inFlight.delete(delivery));
      inFlight.add(delivery);
      await sleep(1000 / RATE);
    }
  })();

  // The kills: each of the two worker slots runs a worker for a random while once it listens
  // (0.1-1.5 s, so kills land at random points of its work), kills it with SIGKILL and starts
  // a new one at once; the two slots run side by side until CRASH_KILLS kills in all. A start
  // takes seconds on a loaded machine, so both workers may be down at once for a moment (the
  // executions wait, as they would in production).
  const kills = [];
  let restartFailures = 0;
  const budgetEnd = Date.now() + BUDGET_MIN * 60_000;
  const more = () => kills.length < KILLS && Date.now() < budgetEnd;
  const slot = async (index) => {
    while (more()) {
      await sleep(random(100, 1500));
      if (!more()) return;
      const victim = workers[index];
      kills.push({ at: Date.now() - started, pid: victim.pid });
      await victim.kill();
      let replacement = null;
      for (let attempt = 0; attempt < 3 && !replacement; attempt += 1) {
        try {
          replacement = await startRole('worker', database.url, WORKER_ENV);
        } catch (error) {
          restartFailures += 1;
          console.warn(`restart failed: ${error.message.slice(0, 300)}`);
        }
      }
      if (!replacement) throw new Error('could not restart a worker three times in a row');
      workers[index] = replacement;
      if (kills.length % 20 === 0)
        console.log(`${kills.length} kills, ${acknowledged.size} executions acknowledged, load ${machineFacts().loadAverage.join(' ')}`);
    }
  };
  await Promise.all([slot(0), slot(1)]);
  streaming = false;
  await stream;
  await Promise.allSettled([...inFlight]);
  const campaignMs = Date.now() - started;

  // Survivors finish everything.
  const settleStarted = Date.now();
  const nonTerminal = async () =>
    Number(
      (
        await database.db
          .selectFrom('executions')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('status', 'in', ['pending', 'running', 'waiting'])
          .executeTakeFirst()
      ).n,
    );
  let left = await nonTerminal();
  while (left > 0 && Date.now() - settleStarted < SETTLE_TIMEOUT_MS) {
    await sleep(500);
    left = await nonTerminal();
  }
  const settleMs = Date.now() - settleStarted;

  // Every process stops before the check, so the step rows and the counter are read at rest
  // (a request made after the rows were read would otherwise count as an effect beyond them).
  await Promise.allSettled([api.stop(), ...workers.map((w) => w.stop())]);
  const figures = await check(database.db, acknowledged, counter.hits);
  Object.assign(figures, {
    kills: kills.length,
    restartFailures,
    deliveriesSent: sent,
    refused,
    campaignSeconds: Math.round(campaignMs / 1000),
    settleSeconds: Math.round(settleMs / 10) / 100,
    unfinishedAtEnd: left,
  });
  const load = machineFacts().loadAverage;
  counter.server.closeAllConnections();
  counter.server.close();
  await database.drop();

  const result = {
    date: new Date().toISOString(),
    machine: machineFacts(),
    loadAverageAtEnd: load,
    settings: {
      kills: KILLS,
      budgetMinutes: BUDGET_MIN,
      leaseMs: LEASE_MS,
      heartbeatMs: Number(WORKER_ENV.SWITCHYARD_HEARTBEAT_MS),
      pollMs: 500,
      deliveriesPerSecond: RATE,
      workflows: names,
      processes: '1 api + 2 workers (node dist/main.js serve --role ...)',
    },
    figures,
  };
  fs.mkdirSync(path.join(here, 'results'), { recursive: true });
  fs.writeFileSync(path.join(here, 'results', 'crash-campaign.json'), JSON.stringify(result, null, 2) + '\n');
  fs.writeFileSync(path.join(here, 'results', 'crash-campaign.md'), report(result));
  console.log(JSON.stringify(figures, null, 2));
  const ok =
    figures.lost === 0 &&
    figures.unfinished === 0 &&
    figures.completedRowsTwice === 0 &&
    figures.effectsBeyondAttempts === 0 &&
    figures.duplicateAttempts === 0 &&
    figures.interruptedWithoutNextAttempt === 0;
  if (!ok) {
    console.error('CRASH CAMPAIGN FAILED: see the figures above');
    process.exitCode = 1;
  }
}

/** The checks, from the database and the counter. */
async function check(db, acknowledged, hits) {
  const executions = await db.selectFrom('executions').select(['id', 'status', 'parent_execution_id']).execute();
  const byId = new Map(executions.map((row) => [row.id, row]));
  const lost = [...acknowledged.keys()].filter((id) => !byId.has(id));
  const unfinished = executions.filter((row) => !['completed', 'failed', 'cancelled'].includes(row.status));
  const statuses = {};
  for (const row of executions) statuses[row.status] = (statuses[row.status] ?? 0) + 1;
  const steps = await db
    .selectFrom('execution_steps')
    .select(['workflow_execution_id', 'node_id', 'iter_index', 'attempt', 'status', 'error', 'kind'])
    .execute();
  const byKey = new Map();
  for (const step of steps) {
    const key = `${step.workflow_execution_id}/${step.node_id}/${step.iter_index ?? '-'}`;
    if (!byKey.has(key)) byKey.set(key, []);
    byKey.get(key).push(step);
  }
  let completedRowsTwice = 0;
  let duplicateAttempts = 0;
  let interrupted = 0;
  let interruptedWithoutNextAttempt = 0;
  let effectsBeyondAttempts = 0;
  let httpRequests = 0;
  let httpAttemptRows = 0;
  for (const [key, rows] of byKey) {
    if (rows.filter((row) => row.status === 'completed').length > 1) completedRowsTwice += 1;
    const attempts = rows.map((row) => row.attempt);
    if (new Set(attempts).size !== attempts.length) duplicateAttempts += 1;
    for (const row of rows) {
      if (row.status !== 'failed' || !row.error) continue;
      if (JSON.parse(row.error).code !== 'interrupted') continue;
      interrupted += 1;
      if (!rows.some((other) => other.attempt > row.attempt)) interruptedWithoutNextAttempt += 1;
    }
    if (rows[0].kind === 'http') {
      // Every request is preceded by its attempt's `running` row: more requests than rows is an effect nobody recorded.
      const attemptRows = rows.filter((row) => row.status !== 'skipped').length;
      const made = hits.get(key) ?? 0;
      httpRequests += made;
      httpAttemptRows += attemptRows;
      if (made > attemptRows) effectsBeyondAttempts += 1;
    }
  }
  // Requests whose key has no step row at all (an effect with no trace).
  for (const [key, n] of hits) if (!byKey.has(key)) effectsBeyondAttempts += n;
  return {
    acknowledged: acknowledged.size,
    executions: executions.length,
    childExecutions: executions.filter((row) => row.parent_execution_id !== null).length,
    statuses,
    lost: lost.length,
    unfinished: unfinished.length,
    stepRows: steps.length,
    completedRowsTwice,
    duplicateAttempts,
    effectsBeyondAttempts,
    httpRequests,
    httpAttemptRows,
    interruptedAttempts: interrupted,
    interruptedWithoutNextAttempt,
  };
}

function report({ date, machine, loadAverageAtEnd, settings, figures }) {
  return `# Crash campaign (issue 13)

\`npm run bench:crash\` (bench/crash-campaign.mjs), ${date}. ${machine.cores} cores (${machine.cpu}), Node ${machine.node}.
Load average at the end ${loadAverageAtEnd.join(' / ')} (1 / 5 / 15 min; this VM's own processes, the campaign's among them).

## How

On PostgreSQL, ${settings.processes}, lease ${settings.leaseMs} ms, heartbeat ${settings.heartbeatMs} ms,
poll ${settings.pollMs} ms. A stream of ${settings.deliveriesPerSecond} webhook deliveries a second
(immediate mode) cycles through five workflows: \`chain\` (http -> code -> http -> set), \`waits\`
(http -> wait 400 ms -> http), \`retries\` (an http step whose first call answers 500, retried),
\`calls\` (call_workflow awaiting a child that makes an http call, then http) and \`loops\` (a
loop of 3 iterations, each an http call, then http). Meanwhile each worker is killed with SIGKILL
0.1-1.5 s after it started listening (whatever it was doing) and a new one started at once, the
two side by side, until ${settings.kills} kills or ${settings.budgetMinutes} minutes, whichever comes first. Then the
processes are left to finish every execution, and the database and the side-effect counter
(every http step calls a local server with its execution, node and iteration in the URL) are
checked.

## Figures

| check | result |
| --- | --- |
| SIGKILLs of a worker | ${figures.kills} of the ${settings.kills} asked for (restarts that failed: ${figures.restartFailures}) |
| deliveries sent / acknowledged 202 | ${figures.deliveriesSent} / ${figures.acknowledged} (refused: ${figures.refused.count} ${JSON.stringify(figures.refused.statuses)}) |
| executions (of which children) | ${figures.executions} (${figures.childExecutions}) |
| **acknowledged deliveries with no execution (lost)** | **${figures.lost}** |
| **executions not terminal at the end** | **${figures.unfinished}** |
| final statuses | ${JSON.stringify(figures.statuses)} |
| **completed steps run again** (two completed rows for one node and iteration) | **${figures.completedRowsTwice}** |
| **http effects beyond the attempts recorded** (a request with no attempt row) | **${figures.effectsBeyondAttempts}** |
| two rows with the same attempt number | ${figures.duplicateAttempts} |
| attempts cut short by a kill (\`interrupted\`, re-run as the next attempt) | ${figures.interruptedAttempts} |
| interrupted attempts with no later attempt | ${figures.interruptedWithoutNextAttempt} |
| http requests made / http attempt rows | ${figures.httpRequests} / ${figures.httpAttemptRows} |
| campaign / settling after it | ${figures.campaignSeconds} s / ${figures.settleSeconds} s |

Re-runs happen only for steps in flight: an http attempt recorded \`running\` when its worker
died is recorded \`failed\` with code \`interrupted\` by the worker that takes the execution over,
which runs the next attempt (at-least-once for effects that are not transactional). Pure steps
since the last commit run again unseen; their rows are written once.
`;
}

await main();
