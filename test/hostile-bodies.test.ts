import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_DEPTH } from '../src/api/plugins/json-depth.js';
import { findTooDeep } from '../src/lib/json-depth.js';
import { describeEachDialect } from './support/dialects.js';
import { node, workflowWith } from './support/engine-helpers.js';
import { createTestApp, JSONAPI, type TestApp } from './support/test-app.js';
import { deliver, executionCount, webhookWorkflow } from './support/webhook-helpers.js';

/** `levels` arrays nested in each other, the outermost counting as one. */
const arrays = (levels: number, inner = '') => `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`;
const HOSTILE = 100_000;

describe('findTooDeep', () => {
  it('finds nothing at the limit and points at the array or object that opens the next level', () => {
    expect(findTooDeep(arrays(3), 3)).toBeNull();
    expect(findTooDeep(arrays(4), 3)).toBe('/0/0/0');
    expect(findTooDeep('{"a":{"b":{"c":1}}}', 3)).toBeNull();
    expect(findTooDeep('{"a":{"b":{"c":{}}}}', 3)).toBe('/a/b/c');
    expect(findTooDeep(arrays(HOSTILE), MAX_BODY_DEPTH)).toBe('/0'.repeat(MAX_BODY_DEPTH));
  });

  it('counts array indices and member names, not strings that look like them', () => {
    expect(findTooDeep('[1, "a,b", {"k":"[[[", "k2" : "]"}, [2, [[]]]]', 3)).toBe('/3/1/0');
    expect(findTooDeep('{"x/y~z":"v","q\\"[":"\\\\","w":[[{"n":{}}]]}', 4)).toBe('/w/0/0/n');
    expect(findTooDeep('{"a":"\\"{{{{{{{{","b":[1]}', 2)).toBeNull();
    expect(findTooDeep('{"x/y~z":[[[]]]}', 3)).toBe('/x~1y~0z/0/0');
    expect(findTooDeep('{"\\u0061\\n":[[[]]]}', 3)).toBe('/a\n/0/0');
  });
});

describeEachDialect('request bodies nested past the limit', (dialect) => {
  let t: TestApp;
  let storeId: string;
  let workflowId: string;
  let canvasId: string;
  let baseId: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    storeId = (await t.request('POST', '/api/v1/stores', { body: { data: { type: 'store', attributes: { name: 'Deep' } } } })).body.data.id;
    workflowId = await workflowWith(t, 'Deep', { nodes: [node('hook', 'webhook')], edges: [] });
    canvasId = await workflowWith(t, 'Canvas', { nodes: [node('hook', 'webhook')], edges: [] });
    baseId = (
      await t.request('POST', '/api/v1/knowledge-bases', { body: { data: { type: 'knowledge-base', attributes: { name: 'Deep' } } } })
    ).body.data.id;
  });
  afterAll(() => t.close());

  const send = (method: 'PUT' | 'POST', url: string, payload: string) =>
    t.app.inject({ method, url, headers: { authorization: `Bearer ${t.tokens.build}`, 'content-type': JSONAPI, accept: '*/*' }, payload });
  const count = async (url: string) => (await t.request('GET', `${url}?page[count]=true&page[limit]=1`)).body.meta.count as number;
  const nodeIds = async () =>
    (
      (await t.request('GET', `/api/v1/workflows/${canvasId}?fields[workflow]=graph`)).body.data.attributes.graph.nodes as { id: string }[]
    ).map((n) => n.id);
  const executions = () => executionCount(t, workflowId);
  const documents = () => count(`/api/v1/knowledge-bases/${baseId}/documents`);

  /**
   * Each route that stored what it was given answered 500 for 100,000 levels (JSON.stringify
   * overflowing the stack). `level` is where `value` sits in the body (the body is level 1), so
   * a value `MAX_BODY_DEPTH - level + 1` levels deep reaches the limit exactly.
   */
  const routes = [
    {
      name: 'PUT /stores/:id/rows/:key (the row)',
      method: 'PUT' as const,
      url: (n: number) => `/api/v1/stores/${storeId}/rows/deep-${n}`,
      body: (value: string) => `{"data":{"row":{"a":${value}}}}`,
      level: 4,
      pointer: '/data/row/a',
      accepted: 201,
      written: async (n: number) => (await t.request('GET', `/api/v1/stores/${storeId}/rows/deep-${n}`)).status === 200,
    },
    {
      name: 'PUT /workflows/:id/graph (a node config)',
      method: 'PUT' as const,
      url: () => `/api/v1/workflows/${canvasId}/graph`,
      body: (value: string) =>
        `{"data":{"graph":{"nodes":[{"id":"s","type":"set","position":{"x":0,"y":0},"config":{"values":{"a":${value}}}}],"edges":[]},"layout":false}}`,
      level: 8,
      pointer: '/data/graph/nodes/0/config/values/a',
      accepted: 200,
      written: async () => (await nodeIds()).includes('s'),
    },
    {
      name: 'POST /workflows/:id/run (the input)',
      method: 'POST' as const,
      url: () => `/api/v1/workflows/${workflowId}/run`,
      body: (value: string) => `{"data":{"draft":true,"input":${value}}}`,
      level: 3,
      pointer: '/data/input',
      accepted: 202,
      written: async () => (await executions()) > 0,
    },
    {
      name: 'POST /knowledge-bases/:id/documents (the metadata)',
      method: 'POST' as const,
      url: () => `/api/v1/knowledge-bases/${baseId}/documents`,
      body: (value: string) =>
        `{"data":{"type":"knowledge-document","attributes":{"title":"Deep","content":"deep text","metadata":{"a":${value}}}}}`,
      level: 5,
      pointer: '/data/attributes/metadata/a',
      accepted: 201,
      written: async () => (await documents()) > 0,
    },
    {
      // The schema's own nesting is limited to 64 (docs/stores.md), but not inside `default`.
      name: 'POST /stores (a default in the schema)',
      method: 'POST' as const,
      url: () => '/api/v1/stores',
      body: (value: string) =>
        `{"data":{"type":"store","attributes":{"name":"Schema","schema":{"type":"object","properties":{"a":{"default":${value}}}}}}}`,
      level: 7,
      pointer: '/data/attributes/schema/properties/a/default',
      accepted: 201,
      written: async () => (await count('/api/v1/stores')) > 1,
    },
  ];

  it.each(routes)('$name: 100,000 levels are 400 json_too_deep with a pointer, nothing written', async (route) => {
    const res = await send(route.method, route.url(HOSTILE), route.body(arrays(HOSTILE)));
    expect(res.statusCode, res.body).toBe(400);
    expect(JSON.parse(res.body).errors).toEqual([
      expect.objectContaining({
        code: 'json_too_deep',
        title: 'JSON nested too deep',
        detail: `the body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels`,
        source: { pointer: `${route.pointer}${'/0'.repeat(MAX_BODY_DEPTH + 1 - route.level)}` },
        meta: { max_depth: MAX_BODY_DEPTH },
      }),
    ]);
    await t.deps.engine.idle();
    expect(await route.written(HOSTILE)).toBe(false);
  });

  it.each(routes)('$name: a body exactly at the limit is accepted, one level more is not', async (route) => {
    const levels = MAX_BODY_DEPTH - route.level + 1;
    const over = await send(route.method, route.url(levels + 1), route.body(arrays(levels + 1)));
    expect(over.statusCode, over.body).toBe(400);
    const res = await send(route.method, route.url(levels), route.body(arrays(levels)));
    expect(res.statusCode, res.body).toBe(route.accepted);
    await t.deps.engine.idle();
    expect(await route.written(levels)).toBe(true);
  });

  it('refuses the depth before looking for unstorable text, which walks the value recursively', async () => {
    const res = await send('POST', '/api/v1/workflows', `{"data":{"name":${arrays(HOSTILE, '"\\u0000"')}}}`);
    expect(res.statusCode, res.body).toBe(400);
    expect(JSON.parse(res.body).errors[0]).toMatchObject({ code: 'json_too_deep', source: { pointer: `/data/name${'/0'.repeat(98)}` } });
  });

  it('leaves raw text bodies alone: brackets in a text/plain document are text', async () => {
    const before = await documents();
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/knowledge-bases/${baseId}/documents?title=Brackets`,
      headers: { authorization: `Bearer ${t.tokens.build}`, 'content-type': 'text/plain', accept: JSONAPI },
      // 1,000 levels as text: far past the limit, and short, because chunking a text without
      // whitespace takes time that grows faster than its length.
      payload: arrays(1_000),
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(await documents()).toBe(before + 1);
  });

  it('answers a webhook delivery nested 100,000 levels with its own 400, starting nothing', async () => {
    const hook = await webhookWorkflow(t, 'Open', { verification: { method: 'none' } });
    const res = await deliver(t, hook.path, { body: `{"a":${arrays(HOSTILE)}}` });
    expect(res.status, res.body).toBe(400);
    expect(res.json().errors[0]).toMatchObject({ code: 'invalid_body', detail: 'the request body nests JSON deeper than 512 levels' });
    await t.deps.engine.idle();
    expect(await executionCount(t, hook.workflowId)).toBe(0);
  });

  it('answers an authenticated Postmark delivery nested 100,000 levels with 400, starting nothing', async () => {
    await t.deps.apps.install({
      provider: 'postmark',
      workspace: { id: t.workspaces.main },
      accountId: 'inbound.example.org',
      credentials: { basic_user: 'pm-deep', basic_password: 'pm-deep-password-01' },
    });
    const mail = await workflowWith(t, 'Mail', { nodes: [node('in', 'email')], edges: [] }, { activate: true });
    const body = (extra: string) =>
      `{"From":"zoe@sender.example","OriginalRecipient":"help@inbound.example.org","ToFull":[{"Email":"help@inbound.example.org"}],"Subject":"Deep","Headers":[{"Name":"Message-ID","Value":"<deep@sender.example>"}]${extra}}`;
    const post = (payload: string) =>
      t.app.inject({
        method: 'POST',
        url: '/webhooks/inbound/postmark',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from('pm-deep:pm-deep-password-01').toString('base64')}`,
        },
        payload,
      });
    const res = await post(body(`,"Extra":${arrays(HOSTILE)}`));
    expect(res.statusCode, res.body).toBe(400);
    expect(JSON.parse(res.body).errors[0]).toMatchObject({
      code: 'invalid_body',
      detail: 'the request body nests JSON deeper than 512 levels',
      source: { pointer: '' },
    });
    await t.deps.engine.idle();
    expect(await executionCount(t, mail)).toBe(0);
    // The same message, as Postmark sends it, still starts the workflow.
    expect(JSON.parse((await post(body(''))).body)).toEqual({ ok: true, started: 1 });
  });
});
