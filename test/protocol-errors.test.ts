import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { notFound } from '../src/errors/app-error.js';
import { describeEachDialect } from './support/dialects.js';
import { jsonApiViolations } from './support/jsonapi-schema.js';
import { parseResponses, rawExchange, type RawResponse } from './support/raw-http.js';
import { createTestApp, JSONAPI, type TestApp } from './support/test-app.js';
import { webhookWorkflow } from './support/webhook-helpers.js';

const UNKNOWN_ID = '0190f2a0-0000-7000-8000-000000000000';

/** A JSON:API error document with exactly this status and code, as the media type promises. */
function expectErrorDocument(
  response: { status: number; headers: Record<string, unknown>; body: unknown },
  status: number,
  code: string,
): void {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe(JSONAPI);
  const body = (typeof response.body === 'string' ? JSON.parse(response.body) : response.body) as {
    errors: { status: string; code: string; title: string; detail: string }[];
  };
  expect(jsonApiViolations(body)).toEqual([]);
  expect(body.errors).toHaveLength(1);
  expect(body.errors[0]).toMatchObject({ status: String(status), code });
  expect(body.errors[0]!.title.length).toBeGreaterThan(0);
  expect(body.errors[0]!.detail.length).toBeGreaterThan(0);
}

function rawErrorDocument(response: RawResponse | undefined, status: number, code: string): void {
  expect(response).toBeDefined();
  expect(response!.headers.connection).toBe('close');
  expectErrorDocument({ status: response!.status, headers: response!.headers, body: response!.body }, status, code);
}

describeEachDialect('answers raised outside the route handlers', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  describe('405 and OPTIONS', () => {
    it('answers a method a path does not serve with 405 method_not_allowed and Allow, HEAD following GET', async () => {
      const me = await t.request('DELETE', '/api/v1/me');
      expectErrorDocument(me, 405, 'method_not_allowed');
      expect(me.headers.allow).toBe('GET, HEAD, OPTIONS');

      const workflow = await t.request('PUT', `/api/v1/workflows/${UNKNOWN_ID}`, { body: { data: {} } });
      expectErrorDocument(workflow, 405, 'method_not_allowed');
      expect(String(workflow.headers.allow).split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH']);
      expect(workflow.body.errors[0].detail).toBe('this path answers GET, HEAD, DELETE, PATCH, OPTIONS, not PUT');

      const health = await t.request('POST', '/healthz', { token: null });
      expectErrorDocument(health, 405, 'method_not_allowed');
      expect(health.headers.allow).toBe('GET, HEAD, OPTIONS');
    });

    it('answers HEAD on a POST-only path with 405 and Allow (Node sends no body for HEAD)', async () => {
      const res = await t.app.inject({ method: 'HEAD', url: `/api/v1/workflows/${UNKNOWN_ID}/activate` });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('POST, OPTIONS');
    });

    it('answers 405 before authentication: it depends only on the method and the path', async () => {
      const res = await t.request('DELETE', '/api/v1/me', { token: null });
      expectErrorDocument(res, 405, 'method_not_allowed');
    });

    it('refuses a missing token (401) and a read token writing (403) before an unacceptable Accept (406)', async () => {
      for (const [url, accept] of [
        ['/api/v1/workflows', 'text/html'],
        [`/api/v1/stores/${UNKNOWN_ID}/dump`, 'application/vnd.api+json'],
      ]) {
        const res = await t.app.inject({ method: 'GET', url, headers: { accept } });
        expect([res.statusCode, res.json().errors[0].code], `${url} with Accept ${accept}`).toEqual([401, 'unauthorized']);
      }
      const write = await t.app.inject({
        method: 'POST',
        url: '/api/v1/workflows',
        headers: { authorization: `Bearer ${t.tokens.read}`, accept: 'text/html', 'content-type': 'application/vnd.api+json' },
        payload: '{"data":{"type":"workflow","attributes":{"name":"x"}}}',
      });
      expect([write.statusCode, write.json().errors[0].code]).toEqual([403, 'forbidden']);
      const authenticated = await t.app.inject({
        method: 'GET',
        url: '/api/v1/workflows',
        headers: { authorization: `Bearer ${t.tokens.build}`, accept: 'text/html' },
      });
      expect([authenticated.statusCode, authenticated.json().errors[0].code]).toEqual([406, 'not_acceptable']);
    });

    it('answers OPTIONS on a served path with 204 and Allow, and on an unknown one with 404', async () => {
      const served = await t.app.inject({ method: 'OPTIONS', url: `/api/v1/workflows/${UNKNOWN_ID}/graph` });
      expect(served.statusCode).toBe(204);
      expect(served.headers.allow).toBe('PUT, OPTIONS');
      expect(served.body).toBe('');
      expect(served.headers['access-control-allow-origin']).toBeUndefined();
      expectErrorDocument(await t.request('OPTIONS', '/api/v1/nothing-here'), 404, 'not_found');
    });

    it('keeps answering an unknown path 404 not_found, with or without a body', async () => {
      expectErrorDocument(await t.request('GET', '/api/v1/nothing-here'), 404, 'not_found');
      expectErrorDocument(
        await t.request('POST', '/nowhere', { token: null, body: '{not json', contentType: 'application/json' }),
        404,
        'not_found',
      );
    });
  });

  describe('bodies outside /api/v1', () => {
    it('reads no body where no route takes one: malformed, oversized or oddly typed bodies get 404 or 405', async () => {
      const malformed = await t.request('POST', '/api/docs/openapi.json', { token: null, body: '{"a":', contentType: 'application/json' });
      expectErrorDocument(malformed, 405, 'method_not_allowed');
      expect(malformed.headers.allow).toBe('GET, HEAD, OPTIONS');
      expectErrorDocument(
        await t.request('POST', '/nowhere', { token: null, body: 'x'.repeat(2 * 1024 * 1024), contentType: 'application/json' }),
        404,
        'not_found',
      );
      expectErrorDocument(
        await t.request('PUT', '/healthz', { token: null, body: '<a/>', contentType: 'application/xml' }),
        405,
        'method_not_allowed',
      );
    });

    it('still answers body errors inside /api/v1 as documents: 400 malformed_json, 413, 415', async () => {
      expectErrorDocument(await t.request('POST', '/api/v1/workflows', { body: '{"data": ' }), 400, 'malformed_json');
      expectErrorDocument(
        await t.request('POST', '/api/v1/workflows', { body: { data: { name: 'x'.repeat(1_100_000) } } }),
        413,
        'payload_too_large',
      );
      expectErrorDocument(
        await t.request('POST', '/api/v1/workflows', { body: '<a/>', contentType: 'application/xml' }),
        415,
        'unsupported_media_type',
      );
    });
  });

  describe('error pointers', () => {
    it('escapes ~ and / of member names in source.pointer, as JSON Pointer requires (found by the fuzz run)', async () => {
      const flat = await t.request('POST', '/api/v1/folders', { body: { data: { name: 'x', 'a/b~c': 1 } } });
      expectErrorDocument(flat, 422, 'validation_failed');
      expect(flat.body.errors[0].source).toEqual({ pointer: '/data/a~1b~0c' });
      const envelope = await t.request('POST', '/api/v1/workflows', {
        body: { data: { type: 'workflow', attributes: { name: 'x', '~/': 1 } } },
      });
      expect(envelope.status).toBe(422);
      expect(envelope.body.errors[0].source).toEqual({ pointer: '/data/attributes/~0~1' });
      const member = await t.request('POST', '/api/v1/workflows', { body: { data: { type: 'workflow', 'x/y': 1 } } });
      expect(member.status).toBe(400);
      expect(member.body.errors[0].source).toEqual({ pointer: '/data/x~1y' });
    });
  });

  describe('router limits', () => {
    it('answers a path parameter over 8192 bytes with 414 uri_too_long and the request id', async () => {
      const res = await t.request('GET', `/api/v1/workflows/${'a'.repeat(8193)}`, { headers: { 'x-request-id': 'long-path-1' } });
      expectErrorDocument(res, 414, 'uri_too_long');
      expect(res.headers['x-request-id']).toBe('long-path-1');
      expect(res.body.errors[0].id).toBe('long-path-1');
    });

    it('routes a 512-character key of 4-byte characters (6,144 percent-encoded bytes)', async () => {
      const key = encodeURIComponent('\u{1F600}'.repeat(512));
      expect(key.length).toBe(6144);
      expectErrorDocument(await t.request('GET', `/api/v1/workflows/${key}`), 404, 'not_found');
    });

    it('answers a percent-escape that is not UTF-8 with 400 bad_request, for every method', async () => {
      expectErrorDocument(await t.request('GET', '/api/v1/workflows/%zz'), 400, 'bad_request');
      expectErrorDocument(await t.request('GET', '/api/v1/workflows/%C0%AF'), 400, 'bad_request');
      expectErrorDocument(await t.request('OPTIONS', '/api/v1/workflows/%zz'), 400, 'bad_request');
      expectErrorDocument(await t.request('GET', '/%E2%82', { token: null }), 400, 'bad_request');
    });
  });

  describe('webhook endpoints keep their own answers', () => {
    it('answers an over-long or malformed id, and any method the endpoint does not take, with the unknown-id 404 bytes', async () => {
      const unknown = await t.app.inject({ method: 'POST', url: `/webhooks/${UNKNOWN_ID}` });
      expect(unknown.statusCode).toBe(404);
      const hook = await webhookWorkflow(t, 'protocol hook', { verification: { method: 'none' } });
      const cases = [
        { method: 'POST' as const, url: `/webhooks/${'a'.repeat(9000)}` },
        { method: 'POST' as const, url: '/webhooks/%zz' },
        { method: 'OPTIONS' as const, url: hook.path },
        { method: 'POST' as const, url: `${hook.path}/extra` },
      ];
      for (const request of cases) {
        const res = await t.app.inject(request);
        expect(res.statusCode, request.url.slice(0, 40)).toBe(404);
        expect(res.headers['content-type']).toBe(JSONAPI);
        expect(res.headers['x-request-id']).toBeUndefined();
        expect(res.body).toBe(unknown.body);
      }
    });
  });
});

describeEachDialect('answers of the HTTP parser and of timeouts, over a real socket', (dialect) => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    // Short deadlines so a timeout arrives quickly; Node checks them every checkIntervalMs.
    t = await createTestApp(dialect, { httpLimits: { headersTimeoutMs: 300, requestTimeoutMs: 600, checkIntervalMs: 50 } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(() => t.close());

  async function stillServing(): Promise<void> {
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
  }

  it('answers a head over 16 KiB with 431 headers_too_large, then closes the connection cleanly', async () => {
    const exchange = await rawExchange(port, [`GET /healthz HTTP/1.1\r\nHost: sy.test\r\nX-Padding: ${'p'.repeat(20_000)}\r\n\r\n`]);
    expect(exchange.responses).toHaveLength(1);
    rawErrorDocument(exchange.responses[0], 431, 'headers_too_large');
    expect(exchange.ended).toBe(true);
    expect(exchange.error).toBeNull();
    await stillServing();
  });

  it('answers a URL that alone overflows the head limit with 431 too (Node has no URL limit of its own)', async () => {
    const exchange = await rawExchange(port, [`GET /api/v1/workflows?sort=${'x'.repeat(17_000)} HTTP/1.1\r\nHost: sy.test\r\n\r\n`]);
    rawErrorDocument(exchange.responses[0], 431, 'headers_too_large');
    expect(exchange.error).toBeNull();
  });

  it('keeps reading and dropping what a client sends after the 431, so the close is still clean', async () => {
    const exchange = await rawExchange(
      port,
      [`GET /healthz HTTP/1.1\r\nHost: sy.test\r\nX-Padding: ${'p'.repeat(20_000)}`],
      async (socket) => {
        // More header bytes after the answer went out: a destroy now would reset the connection.
        for (let i = 0; i < 5; i += 1) await new Promise<void>((done) => socket.write('q'.repeat(10_000), () => done()));
      },
    );
    rawErrorDocument(exchange.responses[0], 431, 'headers_too_large');
    expect(exchange.error).toBeNull();
    await stillServing();
  });

  it('answers a malformed request line with 400 bad_request', async () => {
    const exchange = await rawExchange(port, ['GET /healthz HTTP/9.9 extra\r\n\r\n']);
    rawErrorDocument(exchange.responses[0], 400, 'bad_request');
    expect(exchange.ended).toBe(true);
    expect(exchange.error).toBeNull();
    const garbage = await rawExchange(port, ['\u0001\u0002 not http at all\r\n\r\n']);
    rawErrorDocument(garbage.responses[0], 400, 'bad_request');
    await stillServing();
  });

  it('answers the requests pipelined before bad bytes first, then 400, in order (found by the fuzz run)', async () => {
    const exchange = await rawExchange(port, [
      'GET /healthz HTTP/1.1\r\nHost: sy.test\r\n\r\nGET /readyz HTTP/1.1\r\nHost: sy.test\r\n\r\nNOT HTTP\r\n\r\n',
    ]);
    expect(exchange.responses.map((r) => r.status)).toEqual([200, 200, 400]);
    expect(JSON.parse(exchange.responses[1]!.body)).toMatchObject({ status: 'ready' });
    rawErrorDocument(exchange.responses[2], 400, 'bad_request');
    expect(exchange.error).toBeNull();
  });

  it('answers a chunked body that breaks off with 400 at once, not after waiting for the body (found by the fuzz run)', async () => {
    const exchange = await rawExchange(port, [
      `POST /api/v1/workflows HTTP/1.1\r\nHost: sy.test\r\nAuthorization: Bearer ${t.tokens.build}\r\nContent-Type: ${JSONAPI}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"dat\r\nzz\r\n`,
    ]);
    expect(exchange.responses).toHaveLength(1);
    rawErrorDocument(exchange.responses[0], 400, 'bad_request');
    expect(exchange.error).toBeNull();
  });

  it('answers CONNECT with 400 bad_request instead of dropping the connection (found by the fuzz run)', async () => {
    const exchange = await rawExchange(port, ['CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n']);
    rawErrorDocument(exchange.responses[0], 400, 'bad_request');
    expect(exchange.ended).toBe(true);
    expect(exchange.error).toBeNull();
    await stillServing();
  });

  it('answers a body over the limit with 413 and lets the client finish sending before closing, so it reads the answer (found by the fuzz run)', async () => {
    const body = JSON.stringify({ data: { name: 'x', description: 'y'.repeat(4_000_000) } });
    const exchange = await rawExchange(port, [
      `POST /api/v1/workflows HTTP/1.1\r\nHost: sy.test\r\nAuthorization: Bearer ${t.tokens.build}\r\nContent-Type: ${JSONAPI}\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
    ]);
    expect(exchange.responses).toHaveLength(1);
    rawErrorDocument(exchange.responses[0], 413, 'payload_too_large');
    expect(exchange.ended).toBe(true);
    expect(exchange.error).toBeNull();
    await stillServing();
  });

  it('answers a head that does not arrive in time with 408 request_timeout', async () => {
    const exchange = await rawExchange(port, ['GET /healthz HTTP/1.1\r\nHost: sy.test\r\n']);
    rawErrorDocument(exchange.responses[0], 408, 'request_timeout');
    expect(exchange.ended).toBe(true);
    expect(exchange.error).toBeNull();
    await stillServing();
  });

  it('answers a body that does not arrive in time with 408 request_timeout', async () => {
    const exchange = await rawExchange(port, [
      `POST /api/v1/workflows HTTP/1.1\r\nHost: sy.test\r\nAuthorization: Bearer ${t.tokens.build}\r\nContent-Type: ${JSONAPI}\r\nContent-Length: 100\r\n\r\n{"data":`,
    ]);
    rawErrorDocument(exchange.responses[0], 408, 'request_timeout');
    expect(exchange.error).toBeNull();
    await stillServing();
  });
});

describeEachDialect('503 while the server shuts down', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  it('answers a request arriving after close() began with 503 service_unavailable and Connection: close, and finishes the one in flight', async () => {
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const blocking = {
      ...t.deps.workflows,
      get: async () => {
        entered();
        await released;
        throw notFound('workflow');
      },
    } as unknown as typeof t.deps.workflows;
    const app = await buildApp({
      ...t.deps,
      workflows: blocking,
      config: { apiRateLimit: 0, trustProxy: [], baseUrl: 'http://sy.test' },
      logger: false,
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as { port: number }).port;

    let closed: Promise<undefined> | undefined;
    const exchange = await rawExchange(
      port,
      [`GET /api/v1/workflows/${UNKNOWN_ID} HTTP/1.1\r\nHost: sy.test\r\nAuthorization: Bearer ${t.tokens.build}\r\n\r\n`],
      async (socket) => {
        await inHandler;
        closed = app.close();
        // server.close() runs once the preClose hooks have; from then on, new requests are refused.
        while (app.server.listening) await new Promise((resolve) => setImmediate(resolve));
        // A second request on the same (busy, so not idle-closed) keep-alive connection.
        await new Promise<void>((done) => socket.write('GET /healthz HTTP/1.1\r\nHost: sy.test\r\n\r\n', () => done()));
        release();
      },
    );
    await closed;

    expect(exchange.responses).toHaveLength(2);
    expectErrorDocument(
      { status: exchange.responses[0]!.status, headers: exchange.responses[0]!.headers, body: exchange.responses[0]!.body },
      404,
      'not_found',
    );
    rawErrorDocument(exchange.responses[1], 503, 'service_unavailable');
    expect(exchange.error).toBeNull();
  });

  it('closes a connection whose streamed body was refused before it was read, so close() does not wait on the upload', async () => {
    const app = await buildApp({ ...t.deps, config: { apiRateLimit: 0, trustProxy: [], baseUrl: 'http://sy.test' }, logger: false });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as { port: number }).port;
    // A restore (a streamed body) refused by the Accept check before its body is read; the client
    // sends the first megabyte of 50 and stalls. Kept open, the connection held close() for ever.
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    let received = '';
    socket.on('data', (chunk) => (received += String(chunk)));
    const ended = new Promise<void>((resolve) => socket.once('end', () => resolve()));
    socket.write(
      `POST /api/v1/stores/restore?slug=stalled HTTP/1.1\r\nHost: sy.test\r\nAuthorization: Bearer ${t.tokens.build}\r\nAccept: text/html\r\nContent-Type: application/x-ndjson\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n`,
    );
    socket.write(Buffer.alloc(1024 * 1024, 'x'));
    await ended;
    const [answer] = parseResponses(Buffer.from(received));
    rawErrorDocument(answer, 406, 'not_acceptable');
    await app.close();
    socket.destroy();
  });
});
