import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { openAiCompletion, startFakeProvider, type FakeProvider } from './support/fake-provider.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const M = '/api/v1/memories';

describeEachDialect('memories', (dialect) => {
  let t: TestApp;
  let provider: FakeProvider;
  let connectionId: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    provider = await startFakeProvider();
    const connection = await t.request('POST', '/api/v1/connections', {
      body: {
        data: {
          type: 'connection',
          attributes: { provider: 'openai_compatible', name: 'Local', base_url: provider.openAiBase, api_key: 'sk-memory-test-key' },
        },
      },
    });
    connectionId = connection.body.data.id;
  });
  beforeEach(() => provider.reset());
  afterAll(async () => {
    await t.close();
    await provider.close();
  });

  const create = async (attributes: Record<string, unknown>) => {
    const res = await t.request('POST', M, { body: { data: { type: 'memory', attributes: { name: 'Chat', ...attributes } } } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data as { id: string; attributes: Record<string, unknown> };
  };
  const say = async (memoryId: string, key: string, role: string, content: string) => {
    const res = await t.request('POST', `${M}/${memoryId}/sessions/${encodeURIComponent(key)}/messages`, {
      body: { data: { role, content } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  const context = async (memoryId: string, key: string, query?: string) =>
    (
      await t.request(
        'GET',
        `${M}/${memoryId}/sessions/${encodeURIComponent(key)}/context${query ? `?query=${encodeURIComponent(query)}` : ''}`,
      )
    ).body;
  const session = async (memoryId: string, key: string) => {
    const list = await t.request('GET', `${M}/${memoryId}/sessions?filter[key]=${encodeURIComponent(key)}`);
    return list.body.data[0].attributes;
  };

  it('creates a memory with the documented defaults and refuses bad settings with pointers', async () => {
    const memory = await create({});
    expect(memory.attributes).toMatchObject({
      name: 'Chat',
      window: 20,
      compaction: { mode: 'none', threshold_tokens: 4000 },
      recall: { mode: 'none', top_k: 3 },
    });
    const bad = await t.request('POST', M, {
      body: {
        data: {
          type: 'memory',
          attributes: {
            name: 'x',
            window: 0,
            compaction: { mode: 'summarize', threshold_tokens: 10 },
            recall: { mode: 'fuzzy', top_k: 0 },
          },
        },
      },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { source: { pointer: string } }) => e.source.pointer).sort()).toEqual(
      [
        '/data/attributes/window',
        '/data/attributes/compaction/threshold_tokens',
        '/data/attributes/compaction/connection_id',
        '/data/attributes/compaction/model',
        '/data/attributes/recall/mode',
        '/data/attributes/recall/top_k',
      ].sort(),
    );
  });

  it('keeps sessions apart by key, lists them and their messages oldest first, and clears one', async () => {
    const memory = await create({ name: 'Sessions' });
    const first = await say(memory.id, 'chat/1', 'user', 'Hello there');
    expect(first).toMatchObject({
      role: 'user',
      content: 'Hello there',
      position: 1,
      in_window: true,
      session: { key: 'chat/1', message_count: 1, compaction_count: 0 },
    });
    await say(memory.id, 'chat/1', 'assistant', 'Hi! How can I help?');
    await say(memory.id, 'chat/2', 'user', 'Another conversation');
    const sessions = await t.request('GET', `${M}/${memory.id}/sessions`);
    expect(
      sessions.body.data.map((s: { attributes: { key: string; message_count: number } }) => [s.attributes.key, s.attributes.message_count]),
    ).toEqual([
      ['chat/1', 2],
      ['chat/2', 1],
    ]);
    const messages = await t.request('GET', `${M}/${memory.id}/sessions/${encodeURIComponent('chat/1')}/messages`);
    expect(
      messages.body.data.map((m: { attributes: { role: string; content: string } }) => [m.attributes.role, m.attributes.content]),
    ).toEqual([
      ['user', 'Hello there'],
      ['assistant', 'Hi! How can I help?'],
    ]);
    expect(messages.body.data[0].attributes.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const bad = await t.request('POST', `${M}/${memory.id}/sessions/x/messages`, { body: { data: { role: 'robot', content: 3 } } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { source: { pointer: string } }) => e.source.pointer)).toEqual(['/data/role', '/data/content']);
    expect((await t.request('DELETE', `${M}/${memory.id}/sessions/${encodeURIComponent('chat/1')}/messages`)).status).toBe(204);
    expect((await t.request('GET', `${M}/${memory.id}/sessions/${encodeURIComponent('chat/1')}/messages`)).status).toBe(404);
    expect((await t.request('GET', `${M}/${memory.id}/sessions`)).body.data).toHaveLength(1);
  });

  it('keeps at most `window` messages in the prompt; older ones stay stored', async () => {
    const memory = await create({ name: 'Window', window: 3 });
    for (let i = 1; i <= 5; i++) await say(memory.id, 's', 'user', `message ${i}`);
    const ctx = await context(memory.id, 's');
    expect(ctx.messages.map((m: { content: string }) => m.content)).toEqual(['message 3', 'message 4', 'message 5']);
    const stored = await t.request('GET', `${M}/${memory.id}/sessions/s/messages`);
    expect(stored.body.data.map((m: { attributes: { in_window: boolean } }) => m.attributes.in_window)).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
  });

  it('truncate compaction moves the oldest messages out of the window when the threshold is crossed, and records it', async () => {
    const memory = await create({ name: 'Truncate', compaction: { mode: 'truncate', threshold_tokens: 60 } });
    const sentence = 'This sentence has about twenty tokens in it, give or take a few of them here.';
    for (let i = 0; i < 6; i++) await say(memory.id, 't', 'user', `${i}: ${sentence}`);
    const state = await session(memory.id, 't');
    expect(state.compaction_count).toBeGreaterThan(0);
    expect(state.last_compaction).toMatchObject({ mode: 'truncate' });
    expect(state.last_compaction.tokens_before).toBeGreaterThan(60);
    expect(state.last_compaction.tokens_after).toBeLessThanOrEqual(60);
    expect(state.window_tokens).toBeLessThanOrEqual(60);
    const ctx = await context(memory.id, 't');
    expect(ctx.tokens).toBeLessThanOrEqual(60);
    expect(ctx.messages.at(-1).content).toContain('5:');
    const stored = await t.request('GET', `${M}/${memory.id}/sessions/t/messages`);
    expect(stored.body.data).toHaveLength(6);
  });

  it('summarize compaction asks the model for a summary that replaces the older messages in the window', async () => {
    const memory = await create({
      name: 'Summarize',
      compaction: { mode: 'summarize', threshold_tokens: 80, connection_id: connectionId, model: 'summarizer-1' },
    });
    provider.script('chat', { body: openAiCompletion({ text: 'The user is planning a trip to Lisbon in May and prefers trains.' }) });
    const lines = [
      'I am planning a trip to Lisbon.',
      'It will be in May, for a week.',
      'I prefer trains over planes when I can.',
      'My budget is moderate, nothing fancy.',
      'Can you suggest a route from Madrid?',
    ];
    let last;
    for (const line of lines) last = await say(memory.id, 'trip', 'user', `${line} ${'Some more words to use tokens.'.repeat(2)}`);
    expect(last.session.compaction_due).toBe(true);
    await t.deps.background.drain();
    const requests = provider.received('chat');
    expect(requests).toHaveLength(1);
    expect(requests[0]!.body.model).toBe('summarizer-1');
    expect(requests[0]!.headers.authorization).toBe('Bearer sk-memory-test-key');
    expect(requests[0]!.body.messages[1].content).toContain('Lisbon');
    const ctx = await context(memory.id, 'trip');
    expect(ctx.summary).toBe('The user is planning a trip to Lisbon in May and prefers trains.');
    expect(ctx.messages.length).toBeLessThan(lines.length);
    expect(ctx.messages.at(-1).content).toContain('Madrid');
    const state = await session(memory.id, 'trip');
    expect(state).toMatchObject({ compaction_count: 1, compaction_due: false, compaction_error: null });
    expect(state.last_compaction).toMatchObject({ mode: 'summarize' });
    expect(state.last_compaction.messages).toBeGreaterThan(0);
    const stored = await t.request('GET', `${M}/${memory.id}/sessions/trip/messages?filter[role]=summary`);
    expect(stored.body.data[0].attributes).toMatchObject({ role: 'summary', in_window: true });
  });

  it('a summarize compaction whose model keeps failing falls back to truncating and records the error', async () => {
    const memory = await create({
      name: 'Summary fails',
      compaction: { mode: 'summarize', threshold_tokens: 60, connection_id: connectionId, model: 'broken' },
    });
    provider.script('chat', {
      status: 401,
      body: { error: { message: 'Incorrect API key provided: sk-memo***-key', type: 'invalid_request_error' } },
    });
    for (let i = 0; i < 5; i++)
      await say(memory.id, 'f', 'user', `${i} words words words words words words words words words words words words`);
    await t.deps.background.drain();
    const state = await session(memory.id, 'f');
    expect(state.compaction_error).toMatchObject({ code: 'provider_401' });
    expect(state.compaction_error.message).not.toContain('sk-memo');
    expect(state.last_compaction).toMatchObject({ mode: 'truncate' });
    expect(state.window_tokens).toBeLessThanOrEqual(60);
  });

  it('semantic recall brings back stored messages outside the window that match the query', async () => {
    const memory = await create({ name: 'Recall', window: 2, recall: { mode: 'semantic', top_k: 2 } });
    await say(memory.id, 'r', 'user', 'My dog is called Biscuit and he loves the beach.');
    await say(memory.id, 'r', 'user', 'I work as a pharmacist in Porto.');
    await say(memory.id, 'r', 'user', 'The weather today is grey.');
    await say(memory.id, 'r', 'user', 'What should I cook tonight?');
    const ctx = await context(memory.id, 'r', 'What is the name of my dog?');
    expect(ctx.messages.map((m: { content: string }) => m.content)).toEqual(['The weather today is grey.', 'What should I cook tonight?']);
    expect(ctx.recalled[0]).toMatchObject({ role: 'user', content: 'My dog is called Biscuit and he loves the beach.' });
    expect(ctx.recalled[0].score).toBeGreaterThan(0);
    expect(ctx.recalled.length).toBeLessThanOrEqual(2);
    // Without semantic recall nothing is recalled.
    const plain = await create({ name: 'No recall', window: 1 });
    await say(plain.id, 'r', 'user', 'My dog is called Biscuit.');
    await say(plain.id, 'r', 'user', 'Hello');
    expect((await context(plain.id, 'r', 'dog name')).recalled).toEqual([]);
  });

  it('updates settings and deletes a memory with its sessions', async () => {
    const memory = await create({ name: 'Editable' });
    const patched = await t.request('PATCH', `${M}/${memory.id}`, {
      body: { data: { type: 'memory', id: memory.id, attributes: { window: 5, recall: { mode: 'semantic' } } } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.attributes).toMatchObject({ window: 5, recall: { mode: 'semantic', top_k: 3 } });
    await say(memory.id, 'k', 'user', 'hi');
    expect((await t.request('DELETE', `${M}/${memory.id}`)).status).toBe(204);
    expect((await t.request('GET', `${M}/${memory.id}`)).status).toBe(404);
    expect(await t.deps.db.selectFrom('memory_messages').select('id').where('memory_id', '=', memory.id).execute()).toEqual([]);
  });
});
