import { createHmac } from 'node:crypto';
import fs, { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app.js';
import { createLogger, LOG_FLUSH_DELAY_MS } from '../src/lib/logger.js';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { webhookWorkflow } from './support/webhook-helpers.js';

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** An app over the test app's services that logs to memory at `level`. */
async function loggingApp(
  t: TestApp,
  level: string,
): Promise<{ app: FastifyInstance; lines: () => LogLine[]; logger: ReturnType<typeof createLogger>['logger'] }> {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const { logger } = createLogger({ level, format: 'json', base: { role: 'all' }, destination });
  const app = await buildApp({ ...t.deps, config: { apiRateLimit: 0, trustProxy: [], baseUrl: 'http://sy.test' }, logger });
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogLine);
  return { app, lines, logger };
}

const accessLines = (lines: LogLine[]) => lines.filter((line) => line.msg === 'request');

describeEachDialect('request logging', (dialect) => {
  let t: TestApp;
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await t.deps.engine.idle();
    await t.close();
  });

  it('writes one access line per request at info, with the route pattern and no header', async () => {
    t = await createTestApp(dialect);
    const logging = await loggingApp(t, 'info');
    app = logging.app;
    const created = await app.inject({
      method: 'POST',
      url: '/api/v1/workflows',
      headers: { authorization: `Bearer ${t.tokens.build}`, 'content-type': 'application/vnd.api+json' },
      payload: JSON.stringify({ data: { name: 'Logged' } }),
    });
    const id = (JSON.parse(created.body) as { data: { id: string } }).data.id;
    const read = await app.inject({
      method: 'GET',
      url: `/api/v1/workflows/${id}?fields[workflow]=name`,
      headers: { authorization: `Bearer ${t.tokens.build}`, 'x-request-id': 'trace-me-1' },
    });
    await app.inject({ method: 'GET', url: '/api/v1/me' });

    const lines = logging.lines();
    const access = accessLines(lines);
    expect(access).toHaveLength(3);
    expect(lines).toHaveLength(3);
    expect(access[1]).toMatchObject({
      level: 30,
      role: 'all',
      req_id: 'trace-me-1',
      method: 'GET',
      route: '/api/v1/workflows/:id',
      status: 200,
      workspace_id: t.workspaces.main,
    });
    expect(access[1]!.bytes).toBeGreaterThanOrEqual(read.body.length);
    expect(typeof access[1]!.ms).toBe('number');
    expect(access[0]).toMatchObject({ method: 'POST', route: '/api/v1/workflows', status: 201 });
    // No token: 401, and no workspace is known.
    expect(access[2]).toMatchObject({ route: '/api/v1/me', status: 401, workspace_id: null });
    const all = JSON.stringify(lines);
    expect(all).not.toContain(t.tokens.build);
    expect(all).not.toContain('headers');
    expect(all).not.toContain(id);
  });

  it('logs the headers at debug, with the secret-bearing ones redacted', async () => {
    t = await createTestApp(dialect);
    const logging = await loggingApp(t, 'debug');
    app = logging.app;
    await app.inject({
      method: 'GET',
      url: '/api/v1/me',
      headers: { authorization: `Bearer ${t.tokens.build}`, cookie: 'session=s3cret', 'user-agent': 'log-test' },
    });
    const received = logging.lines().find((line) => line.msg === 'request received') as LogLine & {
      request: { headers: Record<string, string> };
    };
    expect(received.request.headers['user-agent']).toBe('log-test');
    expect(received.request.headers.authorization).toBe('[redacted]');
    expect(received.request.headers.cookie).toBe('[redacted]');
    expect(JSON.stringify(logging.lines())).not.toContain(t.tokens.build);
    expect(accessLines(logging.lines())).toHaveLength(1);
  });

  it('logs no header and no webhook id of a webhook delivery, even at debug', async () => {
    t = await createTestApp(dialect);
    const hook = await webhookWorkflow(t, 'Logged', {
      verification: { method: 'hmac', format: 'plain', header: 'X-Acme-Signature', secret: 'acme' },
    });
    const logging = await loggingApp(t, 'debug');
    app = logging.app;
    const signature = createHmac('sha256', 'acme').update('{}').digest('hex');
    const answer = await app.inject({
      method: 'POST',
      url: hook.path,
      headers: { 'content-type': 'application/json', 'x-acme-signature': signature },
      payload: '{}',
    });
    expect(answer.statusCode).toBe(202);
    const all = JSON.stringify(logging.lines());
    expect(all).not.toContain(signature);
    expect(all).not.toContain(hook.webhookId);
    expect(accessLines(logging.lines())).toEqual([
      expect.objectContaining({ route: '/webhooks/:webhook_id', status: 202, workspace_id: t.workspaces.main }),
    ]);
  });

  it('makes no child logger for a request that logs nothing but its access line', async () => {
    t = await createTestApp(dialect);
    const logging = await loggingApp(t, 'info');
    app = logging.app;
    const child = vi.spyOn(Object.getPrototypeOf(logging.logger) as { child: () => unknown }, 'child');
    try {
      expect(
        (await app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${t.tokens.build}` } })).statusCode,
      ).toBe(200);
      expect(child).not.toHaveBeenCalled();
    } finally {
      child.mockRestore();
    }
  });

  it('logs a failed request with its error through the request child, carrying the request and workspace', async () => {
    t = await createTestApp(dialect);
    const chunks: string[] = [];
    const destination = new Writable({ write: (chunk, _e, done) => void (chunks.push(String(chunk)), done()) });
    const { logger } = createLogger({ level: 'info', format: 'json', base: {}, destination });
    const failing = {
      ...t.deps.workflows,
      get: async () => Promise.reject(new Error('database on fire')),
    } as unknown as typeof t.deps.workflows;
    app = await buildApp({ ...t.deps, workflows: failing, config: { apiRateLimit: 0, trustProxy: [], baseUrl: 'http://sy.test' }, logger });
    const answer = await app.inject({
      method: 'GET',
      url: '/api/v1/workflows/0190f2a0-0000-7000-8000-000000000000',
      headers: { authorization: `Bearer ${t.tokens.build}`, 'x-request-id': 'boom-1' },
    });
    expect(answer.statusCode).toBe(500);
    const lines = chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogLine);
    expect(lines.find((line) => line.msg === 'request failed')).toMatchObject({
      level: 50,
      req_id: 'boom-1',
      workspace_id: t.workspaces.main,
      err: { message: 'database on fire' },
    });
    expect(accessLines(lines)).toEqual([expect.objectContaining({ req_id: 'boom-1', status: 500 })]);
  });
});

describe('createLogger', () => {
  it('writes out a buffered line of a quiet process without waiting for more lines or a flush', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-log-'));
    const file = path.join(dir, 'out.log');
    const fd = openSync(file, 'w');
    try {
      const { logger } = createLogger({ level: 'info', format: 'json', base: { role: 'all' }, fd });
      logger.info({ req_id: 'r1' }, 'request');
      // Far below the 4 KB that makes the destination write by itself.
      for (let waited = 0; readFileSync(file, 'utf8') === '' && waited < 5_000; waited += 20) await sleep(20);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
        level: 30,
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        role: 'all',
        req_id: 'r1',
        msg: 'request',
      });
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('flushes a quiet process without fsync and without writing again while nothing is buffered', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-log-'));
    const file = path.join(dir, 'out.log');
    const fd = openSync(file, 'w');
    const writes = vi.spyOn(fs, 'write');
    const fsyncs = vi.spyOn(fs, 'fsync');
    const ours = (spy: typeof writes | typeof fsyncs) => spy.mock.calls.filter((call) => call[0] === fd).length;
    try {
      const { logger } = createLogger({ level: 'info', format: 'json', base: { role: 'all' }, fd });
      const lines = () => readFileSync(file, 'utf8').split('\n').filter(Boolean);
      logger.info({ req_id: 'q1' }, 'request');
      for (let waited = 0; lines().length < 1 && waited < 5_000; waited += 20) await sleep(20);
      const afterFirst = ours(writes);
      // Idle for several flush periods: nothing is buffered, so nothing is written (an empty
      // flush would write an empty chunk whose drain re-armed the timer for ever).
      await sleep(LOG_FLUSH_DELAY_MS * 4);
      expect(ours(writes)).toBe(afterFirst);
      logger.info({ req_id: 'q2' }, 'request');
      for (let waited = 0; lines().length < 2 && waited < 5_000; waited += 20) await sleep(20);
      expect(lines().map((line) => (JSON.parse(line) as LogLine).req_id)).toEqual(['q1', 'q2']);
      expect(ours(fsyncs)).toBe(0);
    } finally {
      writes.mockRestore();
      fsyncs.mockRestore();
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses nothing and writes JSON lines with the base fields', () => {
    const chunks: string[] = [];
    const destination = new Writable({ write: (chunk, _e, done) => void (chunks.push(String(chunk)), done()) });
    const { logger } = createLogger({ level: 'warn', format: 'json', base: { role: 'worker', pid: 42 }, destination });
    logger.info('dropped');
    logger.warn({ n: 1 }, 'kept');
    const lines = chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogLine);
    expect(lines).toEqual([expect.objectContaining({ level: 40, role: 'worker', pid: 42, n: 1, msg: 'kept' })]);
    expect(typeof lines[0]!.time).toBe('string');
  });
});
