// The main rows of the agent benchmark: `switchyard serve` as a user runs it (lib/spawn-serve.mjs:
// `node dist/main.js serve`, a fresh data dir on embedded SQLite, log level info, its printed
// first-start token), set up through the public API like a user, runs driven through the
// workflow's webhook, and each run's steps read back through the API. Set beyond spawn-serve's
// defaults: SWITCHYARD_HTTP_ALLOW=127.0.0.1 (the instant provider and its tool listen on loopback,
// which the private-address guard refuses otherwise) and SWITCHYARD_API_RATE_LIMIT=10000000 (one
// steps read per run passes the default 600 a minute; the limiter still counts). The webhook
// limit stays at its default unless the run count would pass it (see `envFor`).
//
// Why the API and not the server's SQLite file: with the parent reading the file read-only after
// each run (as the engine suites do), the one-turn overhead was higher in each of four pairs of
// alternating 1,000-run phases on the shared 2-core VM (load 2 to 4.5): p50 0.44-0.53 ms against
// 0.27-0.40 through the API, p99 3.5-6.5 ms against 1.1-4.0, the difference in the stretch after
// the last model call (its journal commit). A second process on the database is not what users
// run; a user reads the steps through the API.
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { apiClient } from '../lib/api-client.mjs';
import { spawnServe } from '../lib/spawn-serve.mjs';
import { agentGraph } from './instant-provider.mjs';
import { measureShapes, overheadOf } from './overhead.mjs';

/* global fetch */
const DEFAULT_WEBHOOK_LIMIT = 6000;
/** Reads of a run's steps until its agent row shows completed (the answer follows the run's end: one should do). */
const STEP_READS = 50;
const STEP_READ_PAUSE_MS = 5;

/**
 * The env beyond spawn-serve's: the allow-list and the API limit always; the webhook limit
 * (6,000 deliveries a minute per address) only when the run could send more than 5,000
 * deliveries, which at a few milliseconds a run could fall within one minute and be refused.
 */
export function envFor(deliveries) {
  return {
    SWITCHYARD_HTTP_ALLOW: '127.0.0.1',
    SWITCHYARD_API_RATE_LIMIT: '10000000',
    ...(deliveries > DEFAULT_WEBHOOK_LIMIT - 1000 ? { SWITCHYARD_WEBHOOK_RATE_LIMIT: '10000000' } : {}),
  };
}

/** Sets up through the API as a user would: the connection, the workflow, its graph, activation. */
async function setUp(server, provider) {
  const api = apiClient(server.baseUrl, server.token);
  const post = async (route, body) => {
    const response = await fetch(`${server.baseUrl}${route}`, { method: 'POST', headers: api.headers, body: JSON.stringify(body) });
    const text = await response.text();
    if (response.status !== 201) throw new Error(`POST ${route} answered ${response.status}: ${text.slice(0, 400)}`);
    return JSON.parse(text);
  };
  const connection = await post('/api/v1/connections', {
    data: {
      type: 'connection',
      attributes: { provider: 'openai_compatible', name: 'Instant', base_url: `${provider.origin}/v1`, api_key: 'sk-bench-key-0000' },
    },
  });
  const workflowId = await api.createWorkflow('bench: agent');
  const graph = await api.putGraph(workflowId, agentGraph(connection.data.id, provider.origin));
  await api.activate(workflowId);
  const hook = graph.graph.nodes.find((node) => node.id === 'hook');
  const hookToken = graph.webhook_tokens?.hook;
  if (!hook?.config.webhook_id || !hookToken)
    throw new Error(`PUT /graph answered no webhook id or token: ${JSON.stringify(graph).slice(0, 400)}`);
  return { api, workflowId, hookUrl: `${server.baseUrl}/webhooks/${hook.config.webhook_id}`, hookToken };
}

/** The agent node's rows of one execution, as `GET /executions/:id/steps` lists them. */
async function agentSteps(server, api, executionId) {
  const route = `/api/v1/executions/${executionId}/steps?filter%5Bnode_id%5D=agent&page%5Blimit%5D=100`;
  const response = await fetch(`${server.baseUrl}${route}`, { headers: api.headers });
  const body = await response.json();
  if (response.status !== 200) throw new Error(`GET ${route} answered ${response.status}: ${JSON.stringify(body).slice(0, 400)}`);
  return body.data.map((step) => step.attributes);
}

/**
 * Starts serve, sets it up, measures both shapes through the webhook, stops it (exit code 0
 * required). Resolves with `{results, server: {command, env, log, shutdownMs, profiles}, extraReads, deliveries}`.
 */
export async function measureServe({ provider, runs, warmup, log, profileDir }) {
  const deliveries = 2 * (runs + warmup);
  const server = await spawnServe({ id: 'agent', env: envFor(deliveries), profileDir });
  let measured;
  try {
    const { api, hookUrl, hookToken } = await setUp(server, provider);
    const headers = { authorization: `Bearer ${hookToken}`, 'content-type': 'application/json' };
    let extraReads = 0;

    const runOnce = async (turns) => {
      const started = performance.now();
      const response = await fetch(hookUrl, { method: 'POST', headers, body: JSON.stringify({ text: `turns=${turns}` }) });
      const text = await response.text();
      const answerMs = performance.now() - started;
      const executionId = response.headers.get('x-execution-id');
      if (response.status !== 200 || JSON.parse(text).text !== 'done')
        throw new Error(`the webhook answered ${response.status} (execution ${executionId}): ${text.slice(0, 400)}`);
      for (let read = 1; ; read++) {
        const rows = await agentSteps(server, api, executionId);
        if (rows.some((row) => row.kind === 'agent' && row.status === 'completed')) return { ...overheadOf(rows, turns), answerMs };
        if (read === STEP_READS)
          throw new Error(`execution ${executionId}: its agent step is not completed after ${STEP_READS} reads of its steps`);
        extraReads += 1;
        await sleep(STEP_READ_PAUSE_MS);
      }
    };

    const results = await measureShapes({
      label: 'serve',
      runOnce,
      runs,
      warmup,
      log,
      onMeasured: (_, from, to) => server.loadSpans.push([from, to]),
    });
    measured = { results, extraReads, deliveries };
  } catch (error) {
    await server.stop().catch(() => {});
    throw error;
  }
  const stopped = await server.stop();
  if (stopped.log.errors > 0)
    throw new Error(`serve's log has ${stopped.log.errors} error lines, e.g.\n${stopped.log.errorSamples.join('\n')}`);
  return {
    ...measured,
    server: { command: server.command, env: server.env, log: stopped.log, shutdownMs: stopped.shutdownMs, profiles: stopped.profiles },
  };
}
