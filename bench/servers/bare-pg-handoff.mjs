// Baseline for the cluster benchmark: the least the design of issue 13 costs on this machine,
// with no Switchyard code. `node bare-pg-handoff.mjs api|worker <database url> [index of count]`.
// - api: node:http; POST /immediate or /respond writes the execution row and its trigger's step
//   row and notifies `bare_work`, all in one autocommitted statement (durable before the answer);
//   /immediate then answers 202, /respond waits for the worker's answer on its own channel.
// - worker: LISTENs on `bare_work`; the worker whose turn it is (id modulo the workers) claims
//   the execution under a 30 s lease in one statement, computes the step in JavaScript, and
//   records the step rows, the execution's end and (respond) the answer's NOTIFY in one more.
// Three statements per delivery, one round trip each, nothing batched, no limits, no logs,
// no sandbox: a floor that a real engine can only approach. Schema: see bench/cluster.mjs.
import { Buffer } from 'node:buffer';
import http from 'node:http';
import pg from 'pg';
import { announceReady } from '../lib/child-server.mjs';

const [role, url, turn = '0/1'] = process.argv.slice(2);
const [index, count] = turn.split('/').map(Number);
const pool = new pg.Pool({ connectionString: url, max: 10 });
const name = `p${process.pid}`;

const insert = `with e as (insert into bare_executions (status, mode, waiter, payload) values ('pending', $1, $2, $3) returning id),
  s as (insert into bare_steps (execution_id, node_id, status, output, started_at, finished_at) select id, 'hook', 'completed', $3, clock_timestamp(), clock_timestamp() from e)
  select id, pg_notify('bare_work', id::text) from e`;
const claim = `update bare_executions set status = 'running', owner = $1, lease_expires_at = clock_timestamp() + interval '30 seconds', started_at = clock_timestamp()
  where id = $2 and status = 'pending' returning mode, waiter, payload, started_at`;
const finish = `with s as (insert into bare_steps (execution_id, node_id, status, output, started_at, finished_at) select $1::bigint, node, 'completed', $2::text::jsonb, $3, clock_timestamp() from unnest($4::text[]) node),
  e as (update bare_executions set status = 'completed', finished_at = clock_timestamp(), output = $2::text::jsonb where id = $1::bigint and owner = $5 returning id)
  select pg_notify($6::text, id::text || ' ' || $2::text) from e where $6::text <> ''`;

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
      const payload = JSON.stringify({ method: request.method, headers: request.headers, body: JSON.parse(Buffer.concat(chunks).toString() || 'null') });
      try {
        const { rows } = await pool.query(insert, [mode, mode === 'respond' ? name : null, payload]);
        const id = String(rows[0].id);
        if (mode === 'immediate') return void response.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ execution_id: id }));
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
  const run = async (id) => {
    const { rows } = await pool.query(claim, [name, id]);
    if (rows.length === 0) return;
    const { mode, waiter, payload, started_at: startedAt } = rows[0];
    const output = JSON.stringify({ seen: payload.body });
    const nodes = mode === 'respond' ? ['shape', 'respond'] : ['shape'];
    await pool.query(finish, [id, output, startedAt, nodes, name, mode === 'respond' ? waiter : '']);
  };
  listener.on('notification', ({ payload }) => {
    if (Number(payload) % count !== index) return;
    run(payload).catch((error) => console.error('bare worker', error));
  });
  await listener.query('listen bare_work');
  announceReady({ port: 0 }, async () => {
    await listener.end();
    await pool.end();
  });
}

if (role === 'api') await api();
else await worker();
