import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const KB = '/api/v1/knowledge-bases';

const RATE_LIMITS = `# Limits

## Rate limits

API requests are rate-limited per token. Exceeding the limit answers 429 with a Retry-After header; the client backs off.

## Body size

Request bodies are limited to 1 MiB on the API; a larger body answers 413.
`;

const WEBHOOKS = `# Webhooks

## Verification

Every webhook node verifies deliveries with a bearer token by default. HMAC signatures are supported for GitHub and Stripe style senders.

## Response modes

A webhook answers immediately with 202, or waits for the last step, or for a respond step.
`;

describeEachDialect('knowledge bases', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  const createBase = async (attributes: Record<string, unknown> = {}) => {
    const res = await t.request('POST', KB, { body: { data: { type: 'knowledge-base', attributes: { name: 'Docs', ...attributes } } } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data as { id: string; attributes: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const ingest = (baseId: string, attributes: Record<string, unknown>) =>
    t.request('POST', `${KB}/${baseId}/documents`, {
      body: { data: { type: 'knowledge-document', attributes: { content_type: 'text/markdown', ...attributes } } },
    });
  const search = (baseId: string, data: Record<string, unknown>) => t.request('POST', `${KB}/${baseId}/search`, { body: { data } });
  const drain = () => t.deps.background.drain();

  it('creates a base with the documented defaults and lists bases oldest first', async () => {
    const first = await createBase({ name: 'First' });
    expect(first.attributes).toMatchObject({
      name: 'First',
      description: null,
      embedder: { kind: 'builtin' },
      chunk_size: 512,
      chunk_overlap: 64,
      document_count: 0,
      chunk_count: 0,
      embedder_status: 'ready',
    });
    const second = await createBase({ name: 'Second', description: 'more', chunk_size: 256, chunk_overlap: 32 });
    expect(second.attributes).toMatchObject({ chunk_size: 256, chunk_overlap: 32, description: 'more' });
    const list = await t.request('GET', `${KB}?filter[name][in]=First,Second`);
    expect(list.body.data.map((d: { id: string }) => d.id)).toEqual([first.id, second.id]);
  });

  it('refuses invalid attributes with 422 and a pointer per violation', async () => {
    const res = await t.request('POST', KB, {
      body: {
        data: {
          type: 'knowledge-base',
          attributes: { name: '', chunk_size: 10, chunk_overlap: -1, embedder: { connection_id: 'nope', model: 'x' }, colour: 'red' },
        },
      },
    });
    expect(res.status).toBe(422);
    const pointers = res.body.errors.map((e: { source: { pointer: string } }) => e.source.pointer).sort();
    expect(pointers).toEqual(
      [
        '/data/attributes/chunk_overlap',
        '/data/attributes/chunk_size',
        '/data/attributes/colour',
        '/data/attributes/embedder/connection_id',
        '/data/attributes/name',
      ].sort(),
    );
    expect(res.body.errors.every((e: { code: string }) => e.code === 'validation_failed')).toBe(true);
  });

  it('ingests markdown: pending until embedded in the background, then ready and searchable in all three modes', async () => {
    const base = await createBase({ name: 'Modes' });
    const created = await ingest(base.id, { title: 'Limits', content: RATE_LIMITS, external_key: 'limits.md', metadata: { area: 'api' } });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`http://sy.test${KB}/${base.id}/documents/${created.body.data.id}`);
    expect(created.body.meta).toEqual({ outcome: 'created' });
    expect(created.body.data.attributes).toMatchObject({
      title: 'Limits',
      external_key: 'limits.md',
      status: 'pending',
      chunk_count: 0,
      content_type: 'text/markdown',
      metadata: { area: 'api' },
      error: null,
    });
    expect(created.body.data.attributes.sha256).toMatch(/^[0-9a-f]{64}$/);
    // Nothing is searchable before the background work ran.
    expect((await search(base.id, { query: 'rate limit', mode: 'keyword' })).body.results).toEqual([]);

    await drain();
    const doc = await t.request('GET', `${KB}/${base.id}/documents/${created.body.data.id}`);
    expect(doc.body.data.attributes).toMatchObject({ status: 'ready', chunk_count: 2 });
    expect((await t.request('GET', `${KB}/${base.id}`)).body.data.attributes).toMatchObject({ document_count: 1, chunk_count: 2 });

    for (const mode of ['keyword', 'vector', 'hybrid']) {
      const res = await search(base.id, { query: 'What happens when the rate limit is exceeded?', mode, top_k: 1 });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toContain('application/json');
      expect(res.body.results).toHaveLength(1);
      expect(res.body.results[0]).toMatchObject({
        document_id: created.body.data.id,
        title: 'Limits',
        heading_path: ['Limits', 'Rate limits'],
      });
      expect(res.body.results[0].text).toContain('Retry-After');
      expect(typeof res.body.results[0].score).toBe('number');
    }
  });

  it('filters search results on metadata equality', async () => {
    const base = await createBase({ name: 'Filtered' });
    await ingest(base.id, { title: 'Limits', content: RATE_LIMITS, metadata: { area: 'api', version: 2, public: true } });
    await ingest(base.id, { title: 'Webhooks', content: WEBHOOKS, metadata: { area: 'webhooks', version: 1, public: false } });
    await drain();
    for (const mode of ['keyword', 'vector', 'hybrid']) {
      const all = await search(base.id, { query: 'limits webhooks verification rate', mode, top_k: 10 });
      expect(new Set(all.body.results.map((r: { title: string }) => r.title))).toEqual(new Set(['Limits', 'Webhooks']));
      for (const [filter, title] of [
        [{ area: 'webhooks' }, 'Webhooks'],
        [{ version: 2 }, 'Limits'],
        [{ public: false }, 'Webhooks'],
        [{ area: 'api', public: true }, 'Limits'],
      ] as const) {
        const res = await search(base.id, { query: 'limits webhooks verification rate', mode, top_k: 10, filter });
        expect(res.status).toBe(200);
        expect(res.body.results.length).toBeGreaterThan(0);
        expect(
          res.body.results.every((r: { title: string }) => r.title === title),
          `${mode} ${JSON.stringify(filter)}`,
        ).toBe(true);
      }
      expect((await search(base.id, { query: 'limits', mode, filter: { area: 'nowhere' } })).body.results).toEqual([]);
    }
  });

  it('validates search arguments with 422 and pointers', async () => {
    const base = await createBase({ name: 'Search validation' });
    const res = await search(base.id, { query: '', top_k: 51, mode: 'fuzzy', filter: { 'bad key': 1, nested: { a: 1 } } });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { source: { pointer: string } }) => e.source.pointer).sort()).toEqual(
      ['/data/filter/bad key', '/data/filter/nested', '/data/mode', '/data/query', '/data/top_k'].sort(),
    );
  });

  it('re-sending identical content is a no-op answering the same document; changed content replaces it with no duplicate chunks', async () => {
    const base = await createBase({ name: 'Re-ingest' });
    const first = await ingest(base.id, { title: 'Limits', content: RATE_LIMITS, external_key: 'k1' });
    await drain();
    const again = await ingest(base.id, { title: 'Limits', content: RATE_LIMITS, external_key: 'k1' });
    expect(again.status).toBe(200);
    expect(again.body.meta).toEqual({ outcome: 'unchanged' });
    expect(again.body.data.id).toBe(first.body.data.id);
    expect(again.body.data.attributes.status).toBe('ready');

    const changed = await ingest(base.id, {
      title: 'Limits',
      content: `${RATE_LIMITS}\n## Burst\n\nShort bursts above the limit are absorbed by a token bucket.\n`,
      external_key: 'k1',
    });
    expect(changed.status).toBe(200);
    expect(changed.body.meta).toEqual({ outcome: 'replaced' });
    expect(changed.body.data.id).toBe(first.body.data.id);
    expect(changed.body.data.attributes.status).toBe('pending');
    await drain();
    const docs = await t.request('GET', `${KB}/${base.id}/documents`);
    expect(docs.body.data).toHaveLength(1);
    expect(docs.body.data[0].attributes).toMatchObject({ status: 'ready', chunk_count: 3 });
    const chunks = await t.deps.db
      .selectFrom('knowledge_chunks')
      .select(['text', 'live'])
      .where('knowledge_base_id', '=', base.id)
      .execute();
    expect(chunks).toHaveLength(3);
    expect(chunks.every((c) => Boolean(c.live))).toBe(true);
    expect((await t.request('GET', `${KB}/${base.id}`)).body.data.attributes).toMatchObject({ document_count: 1, chunk_count: 3 });
    // Without an external key the title identifies the document.
    const byTitle = await ingest(base.id, { title: 'Webhooks', content: WEBHOOKS });
    const byTitleAgain = await ingest(base.id, { title: 'Webhooks', content: WEBHOOKS });
    expect(byTitleAgain.body.data.id).toBe(byTitle.body.data.id);
    expect(byTitleAgain.body.meta.outcome).toBe('unchanged');
  });

  it('swaps a changed document atomically: a search during re-embedding finds the old chunks, never both versions', async () => {
    const base = await createBase({ name: 'Atomic' });
    const old = 'The deployment region is Frankfurt. Backups run nightly at two.';
    const fresh = 'The deployment region is Oregon. Backups run hourly on the hour.';
    await ingest(base.id, { title: 'Ops', content: old, external_key: 'ops' });
    await drain();
    await ingest(base.id, { title: 'Ops', content: fresh, external_key: 'ops' });
    // The new version is staged but not embedded yet: searches see the old version only.
    for (const mode of ['keyword', 'vector', 'hybrid']) {
      const res = await search(base.id, { query: 'deployment region backups Frankfurt Oregon', mode, top_k: 10 });
      expect(res.body.results.map((r: { text: string }) => r.text)).toEqual([old]);
    }
    await drain();
    for (const mode of ['keyword', 'vector', 'hybrid']) {
      const res = await search(base.id, { query: 'deployment region backups Frankfurt Oregon', mode, top_k: 10 });
      expect(res.body.results.map((r: { text: string }) => r.text)).toEqual([fresh]);
    }
  });

  it('ingests a raw text/markdown or text/plain body with title and external_key in the query', async () => {
    const base = await createBase({ name: 'Raw' });
    const md = await t.request('POST', `${KB}/${base.id}/documents?title=Limits&external_key=raw-limits`, {
      body: RATE_LIMITS,
      contentType: 'text/markdown',
    });
    expect(md.status).toBe(201);
    expect(md.body.data.attributes).toMatchObject({ title: 'Limits', external_key: 'raw-limits', content_type: 'text/markdown' });
    const plain = await t.request('POST', `${KB}/${base.id}/documents?title=Notes`, {
      body: 'Plain notes.\n\nSecond paragraph.',
      contentType: 'text/plain; charset=utf-8',
    });
    expect(plain.status).toBe(201);
    expect(plain.body.data.attributes.content_type).toBe('text/plain');
    const untitled = await t.request('POST', `${KB}/${base.id}/documents`, { body: 'x', contentType: 'text/plain' });
    expect(untitled.status).toBe(422);
    expect(untitled.body.errors[0].source).toEqual({ parameter: 'title' });
    // Raw bodies are accepted on the ingest route only.
    const elsewhere = await t.request('POST', KB, { body: 'x', contentType: 'text/plain' });
    expect(elsewhere.status).toBe(415);
    await drain();
    const res = await search(base.id, { query: 'second paragraph', mode: 'keyword' });
    expect(res.body.results[0]).toMatchObject({ title: 'Notes', heading_path: [] });
  });

  it('deletes a document (its chunks leave the search) and a whole base', async () => {
    const base = await createBase({ name: 'Deleting' });
    const doc = await ingest(base.id, { title: 'Limits', content: RATE_LIMITS });
    await ingest(base.id, { title: 'Webhooks', content: WEBHOOKS });
    await drain();
    expect((await t.request('DELETE', `${KB}/${base.id}/documents/${doc.body.data.id}`)).status).toBe(204);
    expect((await t.request('GET', `${KB}/${base.id}/documents/${doc.body.data.id}`)).status).toBe(404);
    for (const mode of ['keyword', 'vector']) {
      const res = await search(base.id, { query: 'rate limit Retry-After', mode, top_k: 10 });
      expect(res.body.results.every((r: { title: string }) => r.title === 'Webhooks')).toBe(true);
    }
    expect((await t.request('GET', `${KB}/${base.id}`)).body.data.attributes).toMatchObject({ document_count: 1, chunk_count: 2 });
    expect((await t.request('DELETE', `${KB}/${base.id}`)).status).toBe(204);
    expect((await t.request('GET', `${KB}/${base.id}`)).status).toBe(404);
    expect(await t.deps.db.selectFrom('knowledge_chunks').select('seq').where('knowledge_base_id', '=', base.id).execute()).toEqual([]);
  });

  it('a re-send while the previous version is still pending wins: only the latest version goes live', async () => {
    const base = await createBase({ name: 'Superseded' });
    const first = await ingest(base.id, { title: 'Plan', content: 'Version one of the plan mentions apples.', external_key: 'plan' });
    await ingest(base.id, { title: 'Plan', content: 'Version two of the plan mentions bananas.', external_key: 'plan' });
    const third = await ingest(base.id, { title: 'Plan', content: 'Version three of the plan mentions cherries.', external_key: 'plan' });
    expect(third.body.data.id).toBe(first.body.data.id);
    expect(third.body.data.attributes).toMatchObject({ status: 'pending' });
    await drain();
    const chunks = await t.deps.db
      .selectFrom('knowledge_chunks')
      .select(['text', 'live'])
      .where('document_id', '=', first.body.data.id)
      .execute();
    expect(chunks.map((c) => [c.text, Boolean(c.live)])).toEqual([['Version three of the plan mentions cherries.', true]]);
    const res = await search(base.id, { query: 'apples bananas cherries', mode: 'keyword', top_k: 10 });
    expect(res.body.results.map((r: { text: string }) => r.text)).toEqual(['Version three of the plan mentions cherries.']);
  });

  it('an empty document becomes ready with no chunks, and replacing a document with nothing empties it', async () => {
    const base = await createBase({ name: 'Empty' });
    const empty = await ingest(base.id, { title: 'Blank', content: '' });
    const full = await ingest(base.id, { title: 'Full', content: 'Some words about lighthouses.' });
    await drain();
    expect((await t.request('GET', `${KB}/${base.id}/documents/${empty.body.data.id}`)).body.data.attributes).toMatchObject({
      status: 'ready',
      chunk_count: 0,
      bytes: 0,
    });
    await ingest(base.id, { title: 'Full', content: '   ' });
    await drain();
    expect((await t.request('GET', `${KB}/${base.id}/documents/${full.body.data.id}`)).body.data.attributes).toMatchObject({
      status: 'ready',
      chunk_count: 0,
    });
    expect((await search(base.id, { query: 'lighthouses', mode: 'hybrid' })).body.results).toEqual([]);
    expect((await t.request('GET', `${KB}/${base.id}`)).body.data.attributes).toMatchObject({ document_count: 2, chunk_count: 0 });
  });

  describe('documents list', () => {
    it('lists documents oldest first with status, filters and pagination', async () => {
      const base = await createBase({ name: 'Listing' });
      for (const title of ['a', 'b', 'c']) await ingest(base.id, { title, content: `Document ${title}.` });
      const page = await t.request('GET', `${KB}/${base.id}/documents?page[limit]=2`);
      expect(page.body.data.map((d: { attributes: { title: string } }) => d.attributes.title)).toEqual(['a', 'b']);
      expect(page.body.links.next).toBeDefined();
      const pending = await t.request('GET', `${KB}/${base.id}/documents?filter[status]=pending`);
      expect(pending.body.data).toHaveLength(3);
      await drain();
      const ready = await t.request('GET', `${KB}/${base.id}/documents?filter[status]=ready&fields[knowledge-document]=title,status`);
      expect(ready.body.data.map((d: { attributes: object }) => d.attributes)).toEqual([
        { title: 'a', status: 'ready' },
        { title: 'b', status: 'ready' },
        { title: 'c', status: 'ready' },
      ]);
    });
  });
});
