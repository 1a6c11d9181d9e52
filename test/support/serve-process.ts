import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemClock } from '../../src/lib/clock.js';
import { IdentityService } from '../../src/services/identity/identity-service.js';
import { expect } from 'vitest';
import { createTestDatabase, type TestDatabase } from './dialects.js';

export interface ServeProcess {
  child: ChildProcess;
  /** `http://host:port` it listens on. */
  address: string;
  output(): string;
  /** SIGTERM, resolving with the exit code. */
  stop(): Promise<number | null>;
}

const PROGRAM = ['--import', 'tsx', 'src/main.ts'];

/** Starts `switchyard serve` from source with `env` added to this process's environment. */
export function startServe(env: Record<string, string | undefined>, args: string[] = []): Promise<ServeProcess> {
  const child = spawn(process.execPath, [...PROGRAM, 'serve', ...args], {
    env: { ...process.env, PORT: '0', SWITCHYARD_LOG_FORMAT: undefined, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += String(chunk)));
  child.stderr!.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start within 60 s:\n${output}`));
    }, 60_000);
    child.stdout!.on('data', () => {
      const match = /listening on (http:\/\/\S+?);/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        child,
        address: match[1]!,
        output: () => output,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          return exited;
        },
      });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${output}`));
    });
  });
}

/** Runs one `switchyard` admin command to its end; resolves with its exit code and output. */
export function runCli(args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [...PROGRAM, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += String(chunk)));
  child.stderr.on('data', (chunk) => (output += String(chunk)));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

/** A call to a serve process's API with a token: the status and the parsed body (null when empty). */
export async function callApi(
  address: string,
  token: string,
  method: string,
  url: string,
  body?: unknown,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever the API answers
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${address}/api/v1${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/vnd.api+json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/**
 * What tests of several serve processes on one PostgreSQL start from: a fresh database with the
 * Pro workspace `main` and a build token of it, and a data directory (the caller removes both).
 */
export async function processTestSetup(dirPrefix: string): Promise<{ database: TestDatabase; token: string; dataDir: string }> {
  const database = await createTestDatabase('postgres');
  const identity = new IdentityService(database.db, systemClock);
  await identity.createWorkspace({ name: 'Main', slug: 'main', plan: 'pro', ownerEmail: 'main@example.test' });
  const token = (await identity.createToken({ workspaceSlug: 'main', scope: 'build' })).token;
  return { database, token, dataDir: mkdtempSync(path.join(os.tmpdir(), dirPrefix)) };
}

/**
 * The environment of a cluster test's processes: the database and data dir, no rate limits,
 * quiet logs, and leases short enough that a SIGKILLed worker's work is taken up within seconds.
 */
export function clusterEnv(database: TestDatabase, dataDir: string, secretKey: string): Record<string, string> {
  return {
    DATABASE_URL: database.url!,
    SWITCHYARD_DATA_DIR: dataDir,
    SWITCHYARD_SECRET_KEY: secretKey,
    SWITCHYARD_API_RATE_LIMIT: '0',
    SWITCHYARD_WEBHOOK_RATE_LIMIT: '0',
    SWITCHYARD_LOG_LEVEL: 'warn',
    SWITCHYARD_HTTP_ALLOW: '127.0.0.1',
    SWITCHYARD_LEASE_MS: '3000',
    SWITCHYARD_HEARTBEAT_MS: '1000',
    SWITCHYARD_POLL_MS: '500',
    SWITCHYARD_SHUTDOWN_GRACE_MS: '2000',
  };
}

/** One API process (`--role api`) and `workers` worker processes on `env`, started together. */
export async function startCluster(env: Record<string, string>, workers = 2): Promise<{ api: ServeProcess; workers: ServeProcess[] }> {
  const [api, ...started] = await Promise.all([
    startServe({ ...env, SWITCHYARD_ROLE: 'api' }),
    ...Array.from({ length: workers }, () => startServe({ ...env, SWITCHYARD_ROLE: 'worker' })),
  ]);
  return { api: api!, workers: started };
}

/** Polls `probe` every 50 ms until `accept` holds (the test fails with the last value after `ms`). */
export async function until<T>(probe: () => Promise<T>, accept: (value: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await probe();
  while (!accept(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await probe();
  }
  expect(accept(value), JSON.stringify(value)).toBe(true);
  return value;
}
