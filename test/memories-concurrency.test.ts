import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { appendMessages } from '../src/memory/session-messages.js';
import { describeEachDialect } from './support/dialects.js';
import { openAiCompletion, startFakeProvider, type FakeProvider } from './support/fake-provider.js';
import { createPeerApp, createTestApp, type TestApp } from './support/test-app.js';

const M = '/api/v1/memories';
const SUMMARY = 'The user and the assistant talked about a trip; nothing is decided yet.';
const FILLER = 'and a few more words so that the window crosses its threshold soon.';

type App = Pick<TestApp, 'app' | 'deps' | 'request' | 'close'>;
interface Sent {
  writer: string;
  content: string;
  id?: string;
  position?: number;
}

/**
 * Every writer of a session's messages (appends through the API of two processes sharing one
 * PostgreSQL database, appends of agent steps inside their own transactions, summarize
 * compactions, clears) at once on one session. Issue 36: on PostgreSQL the summary took a
 * position an uncommitted append also held (`memory_messages_session_idx`), and concurrent
 * first messages both created the session.
 */
describeEachDialect('memories: concurrent writers of one session', (dialect) => {
  let t: TestApp;
  let peer: App | null = null;
  let apps: App[];
  let provider: FakeProvider;
  let connectionId: string;
  const backgroundErrors: unknown[] = [];

  beforeAll(async () => {
    const onBackgroundError = (error: unknown) => backgroundErrors.push(error);
    t = await createTestApp(dialect, { onBackgroundError });
    if (dialect === 'postgres') peer = await createPeerApp(t, { onBackgroundError });
    apps = peer ? [t, peer] : [t];
    provider = await startFakeProvider();
    const connection = await t.request('POST', '/api/v1/connections', {
      body: {
        data: {
          type: 'connection',
          attributes: { provider: 'openai_compatible', name: 'Local', base_url: provider.openAiBase, api_key: 'sk-concurrency-key' },
        },
      },
    });
    connectionId = connection.body.data.id;
  });
  beforeEach(() => {
    provider.reset();
    provider.script('chat', ...Array.from({ length: 500 }, () => ({ body: openAiCompletion({ text: SUMMARY }) })));
    backgroundErrors.length = 0;
  });
  afterAll(async () => {
    await peer?.close();
    await t.close();
    await provider.close();
  });

  const create = async (attributes: Record<string, unknown>) => {
    const res = await t.request('POST', M, { body: { data: { type: 'memory', attributes: { name: 'Busy', ...attributes } } } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data as { id: string };
  };
  const summarizing = (threshold: number, window = 1000) =>
    create({ window, compaction: { mode: 'summarize', threshold_tokens: threshold, connection_id: connectionId, model: 'summarizer-1' } });
  const messagesUrl = (memoryId: string, key: string) => `${M}/${memoryId}/sessions/${encodeURIComponent(key)}/messages`;
  const stored = (memoryId: string) =>
    t.deps.db.selectFrom('memory_messages').selectAll().where('memory_id', '=', memoryId).orderBy('position').execute();
  const sessionsOf = (memoryId: string) => t.deps.db.selectFrom('memory_sessions').selectAll().where('memory_id', '=', memoryId).execute();
  const errorsText = () => backgroundErrors.map((error) => String(error));

  /** Runs every app's background loop over and over until `done` settles, then once more. */
  async function compactWhile<T>(done: Promise<T>): Promise<T> {
    let finished = false;
    const settled = done.finally(() => {
      finished = true;
    });
    const loops = apps.map(async (app) => {
      while (!finished) {
        await app.deps.background.drain();
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
    const result = await settled;
    await Promise.all(loops);
    for (const app of apps) await app.deps.background.drain();
    return result;
  }

  /** `count` messages from one writer through the API of `app`, one after the other. */
  async function apiWriter(app: App, memoryId: string, key: string, writer: string, count: number, failures: string[]) {
    const sent: Sent[] = [];
    for (let i = 0; i < count; i++) {
      const content = `${writer} message ${i} ${FILLER}`;
      const res = await app.request('POST', messagesUrl(memoryId, key), { body: { data: { role: 'user', content } } });
      if (res.status !== 201) failures.push(`${writer} #${i}: ${res.status} ${res.raw}`);
      else sent.push({ writer, content, id: res.body.id, position: res.body.position });
    }
    return sent;
  }

  /** An agent step's writes: the user's message and the answer, in a transaction of its own. */
  async function agentWriter(app: App, memoryId: string, key: string, writer: string, turns: number, failures: string[]) {
    const memory = await app.deps.db.selectFrom('memories').selectAll().where('id', '=', memoryId).executeTakeFirstOrThrow();
    const sent: Sent[] = [];
    for (let i = 0; i < turns; i++) {
      const exchange = [
        { role: 'user' as const, content: `${writer} asks ${i} ${FILLER}` },
        { role: 'assistant' as const, content: `${writer} answers ${i} ${FILLER}` },
      ];
      try {
        const result = await app.deps.db.transaction().execute((trx) => appendMessages(trx, t.clock, memory, key, exchange));
        sent.push(...result.messages.map((m) => ({ writer, content: m.content, id: m.id, position: m.position })));
      } catch (error) {
        failures.push(`${writer} #${i}: ${String(error)}`);
      }
    }
    return sent;
  }

  it('appends from two processes and agent steps during summaries: none lost, positions unique and in order, the summary lands', async () => {
    const memory = await summarizing(150);
    // The session exists before the race (its creation races in the next test).
    const opening = await t.request('POST', messagesUrl(memory.id, 'busy'), { body: { data: { role: 'system', content: 'Be brief.' } } });
    expect(opening.status).toBe(201);
    const failures: string[] = [];
    const writers = apps.flatMap((app, a) => [
      ...[0, 1, 2, 3].map((w) => apiWriter(app, memory.id, 'busy', `api-${a}-${w}`, 20, failures)),
      ...[0, 1].map((w) => agentWriter(app, memory.id, 'busy', `agent-${a}-${w}`, 8, failures)),
    ]);
    const sent = (await compactWhile(Promise.all(writers))).flat();

    expect(failures).toEqual([]);
    expect(errorsText()).toEqual([]);
    const rows = await stored(memory.id);
    // Positions are 1..n without a gap or a repeat, and the session counts them all.
    expect(rows.map((row) => row.position)).toEqual(rows.map((_, i) => i + 1));
    const [session] = await sessionsOf(memory.id);
    expect(session!.message_count).toBe(rows.length);
    // Every message sent is stored once, at the position its writer was told.
    const kept = rows.filter((row) => row.role !== 'summary');
    expect(kept.map((row) => row.content).sort()).toEqual(['Be brief.', ...sent.map((s) => s.content)].sort());
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const s of sent) expect(byId.get(s.id!)?.position, s.content).toBe(s.position);
    // Each writer's messages are stored in the order it sent them.
    for (const writer of new Set(sent.map((s) => s.writer))) {
      const positions = sent.filter((s) => s.writer === writer).map((s) => s.position!);
      expect(positions, writer).toEqual([...positions].sort((a, b) => a - b));
    }
    // The summaries landed: one per compaction, the latest alone in the window.
    const summaries = rows.filter((row) => row.role === 'summary');
    expect(summaries.length).toBeGreaterThan(0);
    expect(summaries.every((row) => row.content === SUMMARY)).toBe(true);
    expect(session!.compaction_count).toBe(summaries.length);
    expect(JSON.parse(session!.last_compaction!)).toMatchObject({ mode: 'summarize' });
    expect(Boolean(session!.compaction_due)).toBe(false);
    expect(session!.lease_owner).toBeNull();
    const window = rows.filter((row) => Boolean(row.in_window));
    expect(window.filter((row) => row.role === 'summary').map((row) => row.id)).toEqual([summaries.at(-1)!.id]);
    expect(session!.window_tokens).toBe(window.reduce((sum, row) => sum + row.tokens, 0));
    const context = await t.request('GET', `${M}/${memory.id}/sessions/busy/context`);
    expect(context.body.summary).toBe(SUMMARY);
  });

  it('the first messages of a new session, sent at once from every process, open one session', async () => {
    const memory = await summarizing(100_000);
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        apps[i % apps.length]!.request('POST', messagesUrl(memory.id, 'fresh'), {
          body: { data: { role: 'user', content: `hello ${i}` } },
        }),
      ),
    );
    expect(responses.filter((res) => res.status !== 201).map((res) => `${res.status} ${res.raw}`)).toEqual([]);
    expect(responses.map((res) => res.body.position).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    const sessions = await sessionsOf(memory.id);
    expect(sessions.map((s) => s.message_count)).toEqual([12]);
  });

  it('clears racing appends and compactions leave a whole session behind, without a server error', async () => {
    const memory = await summarizing(120, 4);
    const statuses: string[] = [];
    const work = apps.flatMap((app, a) => [
      ...[0, 1, 2].map(async (w) => {
        for (let i = 0; i < 12; i++) {
          const res = await app.request('POST', messagesUrl(memory.id, 'cleared'), {
            body: { data: { role: 'user', content: `w${a}${w} ${i} ${FILLER}` } },
          });
          if (res.status !== 201) statuses.push(`append ${res.status} ${res.raw}`);
        }
      }),
      (async () => {
        for (let i = 0; i < 6; i++) {
          const res = await app.request('DELETE', messagesUrl(memory.id, 'cleared'));
          if (res.status !== 204 && res.status !== 404) statuses.push(`clear ${res.status} ${res.raw}`);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })(),
    ]);
    await compactWhile(Promise.all(work));
    expect(statuses).toEqual([]);
    expect(errorsText()).toEqual([]);
    const rows = await stored(memory.id);
    const sessions = await sessionsOf(memory.id);
    expect(sessions.length).toBeLessThanOrEqual(1);
    expect(rows.every((row) => row.session_id === sessions[0]?.id)).toBe(true);
    expect(rows.map((row) => row.position)).toEqual(rows.map((_, i) => i + 1));
    if (sessions[0]) expect(sessions[0].message_count).toBe(rows.length);
  });
});
