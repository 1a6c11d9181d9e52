// A cluster on one PostgreSQL for the cluster benchmarks and the crash campaign: a scratch
// database (migrated, one workspace and a build token), and real `node dist/main.js serve
// --role api|worker|all` processes on it, which can be stopped (SIGTERM) or killed (SIGKILL).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetch } from 'undici';
import { clearTimeout, setTimeout } from 'node:timers';
import pg from 'pg';
import { openPostgres } from '../../dist/db/dialect/postgres.js';
import { migrateOrThrow } from '../../dist/db/migrate.js';
import { IdentityService } from '../../dist/services/identity/identity-service.js';
import { systemClock } from '../../dist/lib/clock.js';
import { cleanEnvironment, benchNodeFlags } from './spawn-serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const ADMIN_URL = process.env.BENCH_DATABASE_URL || process.env.SWITCHYARD_TEST_DATABASE_URL;
const SECRET = 'bench-cluster-key-bench-cluster-key-0123456789';

// Processes still running when the benchmark exits (an error between start and stop) are
// killed, so none outlives it.
const live = new Set();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(130));

/** Runs one statement on the maintenance database (creating and dropping scratch databases). */
export async function adminQuery(text) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A fresh migrated database with workspace `main` and a build token: `{url, token, db, drop()}`. */
export async function clusterDatabase(name) {
  if (!ADMIN_URL)
    throw new Error(
      'set BENCH_DATABASE_URL (or SWITCHYARD_TEST_DATABASE_URL) to a PostgreSQL maintenance database, e.g. postgres://postgres@127.0.0.1:5432/postgres',
    );
  await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8'`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const handle = openPostgres(url.toString(), { max: 4 });
  await migrateOrThrow(handle);
  const identity = new IdentityService(handle.db, systemClock);
  await identity.createWorkspace({ name: 'Main', slug: 'main', plan: 'pro', ownerEmail: 'main@example.test' });
  const { token } = await identity.createToken({ workspaceSlug: 'main', scope: 'build' });
  return {
    url: url.toString(),
    token,
    db: handle.db,
    drop: async () => {
      await handle.close();
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * Starts `node dist/main.js serve --role <role>` on the database (null: SQLite in a fresh data
 * dir) and resolves once it listens: `{role, pid, address, dataDir, token, exited, stop(),
 * kill()}` (`token`: the one a first start on SQLite prints). `env` adds variables.
 */
export async function startRole(role, databaseUrl, env = {}, { readyTimeoutMs = 120_000 } = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `sy-cluster-${role}-`));
  const child = spawn(process.execPath, [...benchNodeFlags(), path.join(root, 'dist/main.js'), 'serve', '--role', role], {
    cwd: root,
    env: {
      ...cleanEnvironment(),
      PORT: '0',
      HOST: '127.0.0.1',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      SWITCHYARD_DATA_DIR: dataDir,
      SWITCHYARD_SECRET_KEY: SECRET,
      SWITCHYARD_LOG_LEVEL: 'warn',
      SWITCHYARD_API_RATE_LIMIT: '0',
      SWITCHYARD_WEBHOOK_RATE_LIMIT: '0',
      SWITCHYARD_HTTP_ALLOW: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output = (output + chunk).slice(-20_000)));
  child.stderr.on('data', (chunk) => (output = (output + chunk).slice(-20_000)));
  live.add(child);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  void exited.then(() => live.delete(child));
  void exited.then(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const address = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve --role ${role} did not start within ${readyTimeoutMs / 1000} s:\n${output}`));
    }, readyTimeoutMs);
    const look = () => {
      const match = /listening on (http:\/\/\S+?);/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout.off('data', look);
      resolve(match[1]);
    };
    child.stdout.on('data', look);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`serve --role ${role} exited (${code ?? signal}) before listening:\n${output}`));
    });
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    role,
    pid: child.pid,
    address,
    dataDir,
    token: /^\s+(sy_[A-Za-z0-9]+)\s*$/m.exec(output)?.[1] ?? null,
    exited,
    output: () => output,
    alive,
    stop: async () => {
      if (alive()) child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (alive()) child.kill('SIGKILL');
      return exited;
    },
  };
}

/** A small JSON:API client for the API process. */
export function apiClient(address, token) {
  const call = async (method, url, body) => {
    const response = await fetch(`${address}/api/v1${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/vnd.api+json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  };
  /** Creates and activates a workflow; answers `{id, hookUrl, hookToken}` of its webhook node `hook`. */
  const activeWorkflow = async (name, graph) => {
    const created = await call('POST', '/workflows', { data: { name } });
    if (created.status !== 201) throw new Error(`creating ${name}: ${created.status} ${JSON.stringify(created.body)}`);
    const id = created.body.data.id;
    const put = await call('PUT', `/workflows/${id}/graph`, { data: { graph, layout: false } });
    if (put.status !== 200) throw new Error(`graph of ${name}: ${put.status} ${JSON.stringify(put.body)}`);
    const activated = await call('POST', `/workflows/${id}/activate`);
    if (activated.status !== 200) throw new Error(`activating ${name}: ${activated.status} ${JSON.stringify(activated.body)}`);
    const hook = put.body.graph.nodes.find((n) => n.id === 'hook');
    return { id, hookUrl: hook ? `${address}/webhooks/${hook.config.webhook_id}` : null, hookToken: put.body.webhook_tokens?.hook ?? null };
  };
  return { call, activeWorkflow };
}

export const node = (id, type, config = {}, extra = {}) => ({ id, type, config, position: { x: 0, y: 0 }, ...extra });
export const edge = (source, target, source_port = 'out') => ({ source, target, source_port });
