// Baseline for the cluster benchmark: the least the design of issue 13 costs on this machine,
// with no Switchyard code. `node bare-pg-handoff.mjs api|worker <database url> <index>/<count>`.
// - api: node:http; POST /immediate or /respond writes the execution row, already `running`
//   under the lease of a worker it picks at random (of <count>), and its trigger's step row, and
//   notifies that worker's channel with what the worker needs, all in one autocommitted
//   statement (durable before the answer): the hand-off Switchyard's API process makes
//   (src/engine/hand-off.ts), less its limits. /immediate then answers 202, /respond waits for
//   the worker's answer on its own channel.
// - worker <index>: LISTENs on its own channel, computes the step in JavaScript as soon as it is
//   told, and records the step rows, the execution's end and (respond) the answer's NOTIFY in
//   one more statement.
// Two statements per delivery, one round trip each, nothing batched, no limits, no logs,
// no sandbox: a floor that a real engine can only approach. Schema: see lib/bare-handoff.mjs.
import { Buffer } from 'node:buffer';
import http from 'node:http';
import pg from 'pg';
import { announceReady } from '../lib/child-server.mjs';

const [role, url, turn = '0/1'] = process.argv.slice(2);
const [index, count] = turn.split('/').map(Number);
const pool = new pg.Pool({ connectionString: url, max: 10 });
const name = `p${process.pid}`;

const insert = `with e as (insert into bare_executions (status, mode, waiter, payload, owner, lease_expires_at) values ('running', $1, $2, $3, $4, clock_timestamp() + interval '5 seconds') returning id),
  s as (insert into bare_steps (execution_id, node_id, status, output, started_at, finished_at) select id, 'hook', 'completed', $3, clock_timestamp(), clock_timestamp() from e)
  select id, pg_notify($4, json_build_array(id, $1, $2, $3::text::json)::text) from e`;
const finish = `with s as (insert into bare_steps (execution_id, node_id, status, output, started_at, finished_at) select $1::bigint, node, 'completed', $2::text::jsonb, $3, clock_timestamp() from unnest($4::text[]) node),
  e as (update bare_executions set status = 'completed', started_at = $3, finished_at = clock_timestamp(), output = $2::text::jsonb, lease_expires_at = null where id = $1::bigint and owner = $5 returning id)
  select pg_notify($6::text, id::text || ' ' || $2::text) from e where $6::text <> ''`;
const workerChannel = (i) => `bare_w${i}`;

async function api() {
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  const waiting = new Map();
  const early = new Map();
  listener.on('notification', ({ payload }) => {
    const space = payload.indexOf(' ');
    const id = payload.slice(0, space);
    const body = payload.slice(space + 1);
    const response = waiting.get(id);
    if (!response) return void early.set(id, body);
    waiting.delete(id);
    response.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await listener.query(`listen ${name}`);
  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', async () => {
      const mode = request.url === '/respond' ? 'respond' : 'immediate';
      const payload = JSON.stringify({
        method: request.method,
        headers: request.headers,
        body: JSON.parse(Buffer.concat(chunks).toString() || 'null'),
      });
      try {
        const { rows } = await pool.query(insert, [
          mode,
          mode === 'respond' ? name : null,
          payload,
          workerChannel(Math.floor(Math.random() * count)),
        ]);
        const id = String(rows[0].id);
        if (mode === 'immediate')
          return void response.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ execution_id: id }));
        if (early.has(id)) {
          const body = early.get(id);
          early.delete(id);
          return void response.writeHead(200, { 'content-type': 'application/json' }).end(body);
        }
        waiting.set(id, response);
      } catch (error) {
        response.writeHead(500).end(String(error));
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  announceReady({ port: server.address().port }, async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await listener.end();
    await pool.end();
  });
}

async function worker() {
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  const me = workerChannel(index);
  listener.on('notification', ({ payload }) => {
    const startedAt = new Date();
    const [id, mode, waiter, input] = JSON.parse(payload);
    const output = JSON.stringify({ seen: input.body });
    const nodes = mode === 'respond' ? ['shape', 'respond'] : ['shape'];
    pool
      .query(finish, [id, output, startedAt, nodes, me, mode === 'respond' ? waiter : ''])
      .catch((error) => console.error('bare worker', error));
  });
  await listener.query(`listen ${me}`);
  announceReady({ port: 0 }, async () => {
    await listener.end();
    await pool.end();
  });
}

if (role === 'api') await api();
else await worker();
