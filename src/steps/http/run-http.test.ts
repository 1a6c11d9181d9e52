import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serializeStepError } from '../../engine/step-errors.js';
import type { StepRunContext } from '../step-runtime.js';
import { runHttp } from './run-http.js';
import { stepContext } from '../../../test/support/step-context.js';

/** Every request is answered by this local server; nothing in this file leaves 127.0.0.1. */
async function listen(handler: http.RequestListener): Promise<{ server: http.Server; origin: string }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function readAll(request: http.IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of request) text += String(chunk);
  return text;
}

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]);

let main: { server: http.Server; origin: string };
let other: { server: http.Server; origin: string };

/** Echo: what arrived, so tests can see method, URL, headers and body as the server did. */
const echo = async (request: http.IncomingMessage, response: http.ServerResponse) => {
  const body = await readAll(request);
  response.setHeader('content-type', 'application/json');
  response.end(JSON.stringify({ method: request.method, url: request.url, headers: request.headers, body }));
};

beforeAll(async () => {
  other = await listen(echo);
  main = await listen(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://local');
    const to = url.searchParams.get('to');
    const redirect = /^\/redirect\/(\d{3})$/.exec(url.pathname);
    if (redirect && to) {
      await readAll(request);
      response.writeHead(Number(redirect[1]), { location: to.replace('OTHER', other.origin) }).end('moved');
    } else if (url.pathname.startsWith('/chain/')) {
      const left = Number(url.pathname.slice('/chain/'.length));
      response.writeHead(302, { location: left === 0 ? '/echo' : `/chain/${left - 1}` }).end();
    } else if (url.pathname === '/text') {
      response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('héllo');
    } else if (url.pathname === '/latin1') {
      response.writeHead(200, { 'content-type': 'text/csv; charset=iso-8859-1' }).end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    } else if (url.pathname === '/binary') {
      response.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    } else if (url.pathname === '/untyped') {
      response.end(PNG);
    } else if (url.pathname === '/bad-json') {
      response.writeHead(200, { 'content-type': 'application/problem+json' }).end('{not json');
    } else if (url.pathname === '/empty') {
      response.writeHead(204).end();
    } else if (url.pathname === '/gzip') {
      response
        .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
        .end(gzipSync(JSON.stringify({ zipped: request.headers['accept-encoding'] })));
    } else if (url.pathname === '/headers') {
      response.setHeader('Set-Cookie', 'session=1; HttpOnly');
      response.setHeader('X-Repeated', ['a', 'b']);
      response.setHeader('X-Single', 'one');
      response.end();
    } else {
      await echo(request, response);
    }
  });
});

afterAll(async () => {
  for (const { server } of [main, other]) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

function context(config: Record<string, unknown>): StepRunContext {
  return stepContext({
    nodeId: 'call_api',
    config,
    execution: { id: 'exec-1', workflowId: 'wf-1', workspaceId: 'ws-1' },
    settings: { httpAllow: ['127.0.0.1'] },
  });
}

interface Echo {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

async function echoed(config: Record<string, unknown>): Promise<Echo> {
  const result = await runHttp(context(config));
  return (result.output as { body: Echo }).body;
}

describe('http step: requests', () => {
  it('sends a GET with the query merged into the URL and reports kind and provider', async () => {
    const result = await runHttp(context({ url: `${main.origin}/echo?a=1&page=1`, query: { page: '2', q: 'x y' } }));
    expect(result.metrics).toEqual({ kind: 'http', provider: main.origin.slice('http://'.length) });
    expect(result.output).toMatchObject({ status: 200, body: { method: 'GET', url: '/echo?a=1&page=2&q=x+y', body: '' } });
  });

  it('sends an object body as JSON with application/json', async () => {
    const seen = await echoed({ method: 'POST', url: `${main.origin}/echo`, body: { id: 7, tags: ['a'] } });
    expect(seen).toMatchObject({ method: 'POST', body: '{"id":7,"tags":["a"]}', headers: { 'content-type': 'application/json' } });
  });

  it('keeps a content-type the user gave, in any letter case, for a JSON body', async () => {
    const seen = await echoed({
      method: 'PUT',
      url: `${main.origin}/echo`,
      headers: { 'Content-Type': 'application/vnd.api+json' },
      body: [1, 2],
    });
    expect(seen).toMatchObject({ method: 'PUT', body: '[1,2]', headers: { 'content-type': 'application/vnd.api+json' } });
  });

  it('sends a string body as it is', async () => {
    const seen = await echoed({ method: 'POST', url: `${main.origin}/echo`, headers: { 'content-type': 'text/csv' }, body: 'a,b\n1,2' });
    expect(seen).toMatchObject({ body: 'a,b\n1,2', headers: { 'content-type': 'text/csv' } });
  });

  it('sends credentials from the URL as Basic auth and never as part of the URL', async () => {
    const seen = await echoed({ url: `${main.origin.replace('//', '//bot:p%40ss@')}/echo` });
    expect(seen.headers.authorization).toBe(`Basic ${Buffer.from('bot:p@ss').toString('base64')}`);
    expect(seen.headers['user-agent']).toBe('Switchyard');
  });
});

describe('http step: responses', () => {
  it('returns headers lower-cased, repeated ones joined, set-cookie always as an array', async () => {
    const { output } = await runHttp(context({ url: `${main.origin}/headers` }));
    expect(output).toMatchObject({
      status: 200,
      body: null,
      headers: { 'set-cookie': ['session=1; HttpOnly'], 'x-repeated': 'a, b', 'x-single': 'one' },
    });
  });

  it('returns text as a string in its declared charset', async () => {
    expect((await runHttp(context({ url: `${main.origin}/text` }))).output).toMatchObject({ body: 'héllo' });
    expect((await runHttp(context({ url: `${main.origin}/latin1` }))).output).toMatchObject({ body: 'café' });
  });

  it('returns binary and untyped bodies as base64 with their content type', async () => {
    expect((await runHttp(context({ url: `${main.origin}/binary` }))).output).toMatchObject({
      body: { base64: PNG.toString('base64'), content_type: 'image/png' },
    });
    expect((await runHttp(context({ url: `${main.origin}/untyped` }))).output).toMatchObject({
      body: { base64: PNG.toString('base64'), content_type: null },
    });
  });

  it('keeps the text of a JSON response that does not parse', async () => {
    expect((await runHttp(context({ url: `${main.origin}/bad-json` }))).output).toMatchObject({ body: '{not json' });
  });

  it('returns null for an empty body', async () => {
    expect((await runHttp(context({ url: `${main.origin}/empty` }))).output).toEqual({
      status: 204,
      headers: expect.any(Object),
      body: null,
    });
  });

  it('asks for compression and decompresses the answer', async () => {
    expect((await runHttp(context({ url: `${main.origin}/gzip` }))).output).toMatchObject({ body: { zipped: 'gzip, deflate, br' } });
  });
});

describe('http step: redirects', () => {
  it('follows a redirect and notes the hop in the logs', async () => {
    const to = encodeURIComponent('/echo?from=redirect');
    const result = await runHttp(context({ url: `${main.origin}/redirect/302?to=${to}` }));
    expect(result.output).toMatchObject({ status: 200, body: { method: 'GET', url: '/echo?from=redirect' } });
    expect(result.logs).toEqual([`followed 302 to GET ${main.origin}/echo`]);
  });

  it('turns a POST into a GET without body on 303, and on 301', async () => {
    for (const status of [303, 301]) {
      const seen = await echoed({ method: 'POST', url: `${main.origin}/redirect/${status}?to=/echo`, body: { a: 1 } });
      expect(seen.method).toBe('GET');
      expect(seen.body).toBe('');
      expect(seen.headers['content-type']).toBeUndefined();
    }
  });

  it('repeats method and body on 307 and 308', async () => {
    for (const status of [307, 308]) {
      const seen = await echoed({ method: 'PATCH', url: `${main.origin}/redirect/${status}?to=/echo`, body: { a: 1 } });
      expect(seen).toMatchObject({ method: 'PATCH', body: '{"a":1}' });
    }
  });

  it('follows up to 5 redirects and fails non-retriably on the 6th', async () => {
    expect((await runHttp(context({ url: `${main.origin}/chain/4` }))).logs).toHaveLength(5);
    const error = await runHttp(context({ url: `${main.origin}/chain/5` })).catch(serializeStepError);
    expect(error).toEqual({
      name: 'NonRetriableError',
      code: 'too_many_redirects',
      message: `GET ${main.origin}/chain/0: more than 5 redirects`,
      retryable: false,
      retry_after_ms: null,
    });
  });

  it('keeps Authorization on a same-origin redirect', async () => {
    const seen = await echoed({ url: `${main.origin}/redirect/302?to=/echo`, headers: { Authorization: 'Bearer secret' } });
    expect(seen.headers.authorization).toBe('Bearer secret');
  });

  it('strips Authorization and Cookie on a cross-origin redirect', async () => {
    const seen = await echoed({
      url: `${main.origin}/redirect/307?to=${encodeURIComponent('OTHER/echo')}`,
      headers: { Authorization: 'Bearer secret', Cookie: 'sid=1', 'X-Trace': 't1' },
    });
    expect(seen.headers.host).toBe(other.origin.slice('http://'.length));
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers.cookie).toBeUndefined();
    expect(seen.headers['x-trace']).toBe('t1');
  });

  it('refuses a redirect to a non-http scheme', async () => {
    const error = await runHttp(context({ url: `${main.origin}/redirect/302?to=${encodeURIComponent('file:///etc/passwd')}` })).catch(
      serializeStepError,
    );
    expect(error).toMatchObject({
      code: 'unsupported_protocol',
      message: 'only http and https URLs can be requested, not file:',
      retryable: false,
    });
  });
});
