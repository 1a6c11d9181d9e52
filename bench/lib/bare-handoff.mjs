// The bare PostgreSQL handoff beside the cluster (servers/bare-pg-handoff.mjs): one API process
// and two workers of plain node:http + pg on a scratch database, measured with the cluster's
// loads. What it gives is the cost of the prescribed design itself on this machine.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { fetch } from 'undici';
import pg from 'pg';
import { ADMIN_URL, adminQuery } from './cluster-procs.mjs';
import { latencyLoop, settledRespond } from './latency-loop.mjs';
import { postgresCpuMs, processCpuMs, sumCpu } from './process-cpu.mjs';
import { quantile } from './stats.mjs';
import { spawnServer } from './spawn-server.mjs';

const script = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../servers/bare-pg-handoff.mjs');
const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

const SCHEMA = `
create table bare_executions (id bigserial primary key, status text not null, mode text not null, waiter text, owner text,
  lease_expires_at timestamptz, payload jsonb not null, output jsonb, inserted_at timestamptz not null default clock_timestamp(),
  started_at timestamptz, finished_at timestamptz);
create table bare_steps (execution_id bigint not null references bare_executions (id), node_id text not null, status text not null,
  output jsonb, started_at timestamptz, finished_at timestamptz, primary key (execution_id, node_id));`;

/** Runs the three loads of measureTarget (bench/cluster.mjs) against the bare handoff: `{claimLight, immediate, respond8}`. */
export async function measureBareHandoff({ durationS, settleS, lightDeliveries, delivery }) {
  const name = `sy_bench_bare_${process.pid}`;
  await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8'`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  const processes = [];
  try {
    await db.query(SCHEMA);
    processes.push(await spawnServer(script, ['api', url.toString(), '0/2'], { id: 'bare-api' }));
    for (const turn of ['0/2', '1/2'])
      processes.push(await spawnServer(script, ['worker', url.toString(), turn], { id: `bare-worker-${turn}` }));
    const origin = processes[0].baseUrl;
    const headers = { 'content-type': 'application/json' };
    const counts = async () =>
      (await db.query(`select count(*) filter (where status = 'completed') as done, count(*) as n from bare_executions`)).rows[0];
    const drained = async () => {
      for (let c = await counts(); Number(c.done) < Number(c.n); c = await counts()) await sleep(20);
    };
    const delays = async (where) =>
      (await db.query(`select extract(epoch from started_at - inserted_at) * 1000 as ms, finished_at from bare_executions where ${where}`))
        .rows;
    // Warm-up, as the cluster gets.
    await latencyLoop({ origin, path: '/immediate', headers, body: delivery, connections: 8, duration: 2, expectStatus: 202 });
    await drained();
    const light = await db.query('select coalesce(max(id), 0) as id from bare_executions');
    for (let i = 0; i < lightDeliveries; i += 1) {
      const response = await fetch(`${origin}/immediate`, { method: 'POST', headers, body: delivery });
      if (response.status !== 202) throw new Error(`bare delivery answered ${response.status}`);
      await response.text();
      await sleep(10);
    }
    await drained();
    const lightMs = (await delays(`id > ${light.rows[0].id}`)).map((row) => Number(row.ms));
    const claimLight = {
      deliveries: lightDeliveries,
      p50: round(quantile(lightMs, 0.5)),
      p99: round(quantile(lightMs, 0.99)),
      max: round(Math.max(...lightMs)),
    };
    console.log('bare handoff claim latency (light)', claimLight);

    const before = await db.query('select coalesce(max(id), 0) as id from bare_executions');
    const startedAt = Date.now();
    const loop = await latencyLoop({
      origin,
      path: '/immediate',
      headers,
      body: delivery,
      connections: 32,
      duration: durationS,
      expectStatus: 202,
    });
    const loadEnd = Date.now();
    await drained();
    const drainedAt = Date.now();
    const rows = await delays(`id > ${before.rows[0].id}`);
    const inWindow = rows.filter((row) => row.finished_at.getTime() <= loadEnd).length;
    const underLoad = rows.map((row) => Number(row.ms));
    const immediate = {
      accepted: loop.requests,
      failures: loop.failures,
      answersPerSecond: round(loop.requestsPerSecond, 0),
      completed: rows.length,
      completedPerSecondInWindow: round(inWindow / ((loadEnd - startedAt) / 1000), 0),
      completedPerSecondWithDrain: round(rows.length / ((drainedAt - startedAt) / 1000), 0),
      claimUnderLoadMs: { p50: round(quantile(underLoad, 0.5)), p99: round(quantile(underLoad, 0.99)) },
    };
    console.log('bare handoff immediate', immediate);

    const cpuParts = {
      api: () => processCpuMs(processes[0].pid),
      workers: () => sumCpu(processes.slice(1).map((p) => p.pid)),
      postgres: postgresCpuMs,
    };
    const respond8 = await settledRespond(
      (duration) => latencyLoop({ origin, path: '/respond', headers, body: delivery, connections: 8, duration, expectStatus: 200 }),
      durationS,
      settleS,
      cpuParts,
    );
    console.log('bare handoff respond at 8', respond8);
    return { claimLight, immediate, respond8 };
  } finally {
    await Promise.allSettled(processes.map((p) => p.stop()));
    await db.end();
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}
