import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cancellationOf, RunCancel } from '../../lib/cancellation.js';
import { manualClock } from '../../lib/clock.js';
import { createGuardedDispatcher, type Resolver } from '../../lib/ssrf-guard.js';
import { serializeStepError } from '../../engine/step-errors.js';
import type { StepRunContext } from '../step-runtime.js';
import { createHttpRuntime, runHttp } from './run-http.js';
import { stepContext } from '../../../test/support/step-context.js';

/**
 * Failure paths. Only 127.0.0.1 ever answers; the refusal tests aim at other addresses
 * (127.0.0.2, ::1, 169.254.169.254) precisely to show that nothing is sent there.
 */
let server: http.Server;
let origin: string;
let port: number;
let hits = 0;
let bigBytesSent = 0;
let bigFinished = false;
let slowArrived: () => void = () => {};

const REASON = 'private, loopback, link-local and reserved addresses are not allowed (see SWITCHYARD_HTTP_ALLOW)';

function streamBig(response: http.ServerResponse) {
  const chunk = Buffer.alloc(64 * 1024, 'a');
  response.writeHead(200, { 'content-type': 'text/plain' });
  const write = () => {
    while (bigBytesSent < 64 * 1024 * 1024) {
      bigBytesSent += chunk.length;
      if (!response.write(chunk)) return void response.once('drain', write);
    }
    bigFinished = true;
    response.end();
  };
  response.on('close', () => response.removeAllListeners('drain'));
  write();
}

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://local');
    const status = /^\/status\/(\d{3})$/.exec(url.pathname);
    if (status) {
      const retryAfter = url.searchParams.get('retry_after');
      response.writeHead(Number(status[1]), { 'content-type': 'text/plain', ...(retryAfter ? { 'retry-after': retryAfter } : {}) });
      response.end(url.searchParams.get('body') ?? 'no such order');
    } else if (url.pathname === '/long-error') {
      response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'x'.repeat(5000) }));
    } else if (url.pathname === '/slow') {
      slowArrived();
    } else if (url.pathname === '/slow-body') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('first part');
    } else if (url.pathname === '/big') {
      streamBig(response);
    } else if (url.pathname === '/declared') {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(20 * 1024 * 1024) });
      response.write('a');
    } else if (url.pathname === '/bomb') {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(gzipSync(Buffer.alloc(1024 * 1024)));
    } else if (url.pathname === '/to-loopback-alias') {
      response.writeHead(302, { location: `http://127.0.0.2:${port}/hits` }).end();
    } else if (url.pathname === '/to-internal-name') {
      response.writeHead(302, { location: `http://internal.partner.test:${port}/hits` }).end();
    } else {
      hits += 1;
      response.writeHead(200, { 'content-type': 'text/plain' }).end('hit');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  hits = 0;
});

function context(config: Record<string, unknown>, overrides: Partial<StepRunContext> = {}): StepRunContext {
  return stepContext({
    nodeId: 'call_api',
    config,
    clock: manualClock('2026-01-01T00:00:00.000000Z'),
    execution: { id: 'exec-1', workflowId: 'wf-1', workspaceId: 'ws-1' },
    settings: { httpAllow: ['127.0.0.1'] },
    ...overrides,
  });
}

const failure = (config: Record<string, unknown>, overrides: Partial<StepRunContext> = {}) =>
  runHttp(context(config, overrides)).then(() => null, serializeStepError);

describe('http step: HTTP errors', () => {
  it('fails a 404 without retrying, keeping the status and the body', async () => {
    expect(await failure({ url: `${origin}/status/404?secret=k` })).toEqual({
      name: 'NonRetriableError',
      code: 'http_404',
      message: `GET ${origin}/status/404 answered 404 Not Found`,
      retryable: false,
      retry_after_ms: null,
      details: { status: 404, body: 'no such order' },
    });
  });

  it('keeps at most 1 KiB of an error body', async () => {
    const error = await failure({ url: `${origin}/long-error` });
    expect(error).toMatchObject({ code: 'http_400', retryable: false });
    expect(error?.details?.body).toBe(`{"error":"${'x'.repeat(1024 - 10)}`);
  });

  it('fails a 500 as retryable', async () => {
    expect(await failure({ url: `${origin}/status/500?body=boom` })).toEqual({
      name: 'StepError',
      code: 'http_500',
      message: `GET ${origin}/status/500 answered 500 Internal Server Error`,
      retryable: true,
      retry_after_ms: null,
      details: { status: 500, body: 'boom' },
    });
  });

  it('retries a 429 after its Retry-After seconds', async () => {
    expect(await failure({ url: `${origin}/status/429?retry_after=7` })).toMatchObject({
      name: 'RetryAfterError',
      code: 'http_429',
      retryable: true,
      retry_after_ms: 7000,
    });
  });

  it('retries a 503 at its Retry-After date, measured on the step clock', async () => {
    const date = encodeURIComponent('Thu, 01 Jan 2026 00:00:30 GMT');
    expect(await failure({ url: `${origin}/status/503?retry_after=${date}` })).toMatchObject({
      name: 'RetryAfterError',
      code: 'http_503',
      retry_after_ms: 30_000,
    });
  });

  it('retries a 429 without Retry-After with the node backoff', async () => {
    expect(await failure({ url: `${origin}/status/429` })).toMatchObject({
      name: 'StepError',
      code: 'http_429',
      retryable: true,
      retry_after_ms: null,
    });
  });
});

describe('http step: time, cancellation and size', () => {
  it('times out after timeout_ms, waiting for headers or for the rest of the body', async () => {
    for (const path of ['/slow', '/slow-body']) {
      expect(await failure({ url: `${origin}${path}`, timeout_ms: 150 })).toEqual({
        name: 'StepTimeoutError',
        code: 'timeout',
        message: `GET ${origin}${path}: no complete response within 150 ms`,
        retryable: true,
        retry_after_ms: null,
      });
    }
  });

  it('stops without retrying when the execution is cancelled', async () => {
    const cancel = new RunCancel();
    const arrived = new Promise<void>((resolve) => (slowArrived = resolve));
    const pending = failure({ url: `${origin}/slow` }, { cancel });
    await arrived;
    cancel.abort();
    expect(await pending).toEqual({
      name: 'StepError',
      code: 'cancelled',
      message: `GET ${origin}/slow: cancelled`,
      retryable: false,
      retry_after_ms: null,
    });
  });

  it("reports the engine's own time limit as a timeout", async () => {
    const error = await failure({ url: `${origin}/slow` }, { cancel: cancellationOf(AbortSignal.timeout(50)) });
    expect(error).toMatchObject({ code: 'timeout', message: `GET ${origin}/slow: the step's time limit passed` });
  });

  it('stops reading a response past 10 MiB', async () => {
    bigBytesSent = 0;
    expect(await failure({ url: `${origin}/big` })).toEqual({
      name: 'NonRetriableError',
      code: 'response_too_large',
      message: `GET ${origin}/big: the response is larger than 10485760 bytes`,
      retryable: false,
      retry_after_ms: null,
      details: { status: 200, limit_bytes: 10485760 },
    });
    expect(bigFinished).toBe(false);
  });

  it('refuses a declared length over the limit before reading it', async () => {
    expect(await failure({ url: `${origin}/declared`, timeout_ms: 5000 })).toMatchObject({ code: 'response_too_large' });
  });

  it('counts the limit after decompression', async () => {
    const small = createHttpRuntime({ maxResponseBytes: 64 * 1024 });
    const error = await small(context({ url: `${origin}/bomb` })).catch(serializeStepError);
    expect(error).toMatchObject({ code: 'response_too_large', message: `GET ${origin}/bomb: the response is larger than 65536 bytes` });
  });

  it('fails a refused connection as a retryable network error', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await failure({ url: `http://127.0.0.1:${closedPort}/` })).toMatchObject({
      name: 'StepError',
      code: 'network_error',
      retryable: true,
      details: { error_code: 'ECONNREFUSED' },
    });
  });
});

describe('http step: the private-address guard', () => {
  const unguarded = { settings: { httpAllow: [] } };

  it.each([
    ['http://127.0.0.1:PORT/hits', '127.0.0.1'],
    ['http://[::1]:PORT/hits', '::1'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['http://[::ffff:127.0.0.1]:PORT/hits', '::ffff:7f00:1'],
  ])('refuses %s without an allow-list entry', async (url, address) => {
    expect(await failure({ url: url.replace('PORT', String(port)) }, unguarded)).toEqual({
      name: 'NonRetriableError',
      code: 'forbidden_address',
      message: `refused to connect to ${address}: ${REASON}`,
      retryable: false,
      retry_after_ms: null,
      details: { host: address, address },
    });
    expect(hits).toBe(0);
  });

  it('refuses localhost, which resolves to loopback', async () => {
    const error = await failure({ url: `http://localhost:${port}/hits` }, unguarded);
    expect(error).toMatchObject({ code: 'forbidden_address', retryable: false, details: { host: 'localhost' } });
    expect(error?.message).toMatch(/^refused to connect to localhost \((127\.0\.0\.1|::1)\): /);
    expect(hits).toBe(0);
  });

  it('checks every redirect hop: an allow-listed host cannot send the request on to another loopback address', async () => {
    expect(await failure({ url: `${origin}/to-loopback-alias` })).toMatchObject({
      code: 'forbidden_address',
      message: `refused to connect to 127.0.0.2: ${REASON}`,
    });
  });

  it('checks every redirect hop after DNS: an allowed name cannot redirect to a name that resolves to loopback', async () => {
    const resolve: Resolver = (hostname, _options, callback) => process.nextTick(callback, null, [{ address: '127.0.0.1', family: 4 }]);
    const runtime = createHttpRuntime({ dispatcherFor: (allow) => createGuardedDispatcher(allow, { resolve }) });
    const run = (path: string) =>
      runtime(context({ url: `http://hooks.partner.test:${port}${path}` }, { settings: { httpAllow: ['hooks.partner.test'] } }));
    expect((await run('/hits')).output).toMatchObject({ status: 200, body: 'hit' });
    expect(await run('/to-internal-name').catch(serializeStepError)).toMatchObject({
      code: 'forbidden_address',
      message: `refused to connect to internal.partner.test (127.0.0.1): ${REASON}`,
    });
    expect(hits).toBe(1);
  });

  it.each(['file:///etc/passwd', 'ftp://127.0.0.1/pub', 'data:text/plain,hi'])('refuses the non-http URL %s', async (url) => {
    expect(await failure({ url }, unguarded)).toMatchObject({ name: 'NonRetriableError', code: 'unsupported_protocol', retryable: false });
  });

  it('refuses a malformed URL without echoing it', async () => {
    expect(await failure({ url: 'http://user:hunter2@[bad' })).toMatchObject({
      code: 'invalid_url',
      message: 'config.url is not a valid URL',
    });
  });
});
