import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { claimDue, claimQuery } from '../src/store/lease-claims.js';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const KB = '/api/v1/knowledge-bases';

describeEachDialect('background work claims', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  it('claims due documents under a lease, a batch at a time, and takes them again once the lease expires', async () => {
    const base = await t.request('POST', KB, { body: { data: { type: 'knowledge-base', attributes: { name: 'Claims' } } } });
    const ids: string[] = [];
    for (const title of ['a', 'b', 'c']) {
      const doc = await t.request('POST', `${KB}/${base.body.data.id}/documents`, {
        body: { data: { type: 'knowledge-document', attributes: { title, content: `Document ${title}.` } } },
      });
      ids.push(doc.body.data.id);
    }
    const now = t.clock.now();
    const later = new Date(t.clock.nowMs() + 60_000).toISOString();
    const claim = (owner: string, at: string, leaseUntil: string, limit: number) =>
      claimDue(t.deps.db, 'knowledge_documents', 'pending', { dialect, owner, now: at, leaseUntil, limit });
    // The compiled claim is reused: each call's own owner, times and limit go into it.
    const first = await claim('first', now, later, 2);
    expect(first).toHaveLength(2);
    expect(first.every((row) => row.lease_owner === 'first' && row.lease_expires_at === later)).toBe(true);
    const second = await claim('second', now, later, 2);
    expect(second.map((row) => row.lease_owner)).toEqual(['second']);
    expect(new Set([...first, ...second].map((row) => row.id))).toEqual(new Set(ids));
    expect(await claim('third', now, later, 2)).toEqual([]);
    const expired = new Date(t.clock.nowMs() + 61_000).toISOString();
    const again = await claim('fourth', expired, new Date(t.clock.nowMs() + 120_000).toISOString(), 16);
    expect(again.map((row) => row.id).sort()).toEqual([...ids].sort());
  });

  it('finds due rows through the partial indexes of due work, not by scanning the table (SQLite plan)', async () => {
    if (dialect !== 'sqlite') return;
    const options = { dialect, owner: 'o', now: 'n', leaseUntil: 'l', limit: 16 } as const;
    for (const [table, due, index] of [
      ['knowledge_documents', 'pending', 'knowledge_documents_pending_idx'],
      ['knowledge_bases', 'reembedding', 'knowledge_bases_reembed_idx'],
      ['memory_sessions', 'compaction', 'memory_sessions_due_idx'],
    ] as const) {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the claim builder takes any leased table
      const compiled = claimQuery(t.deps.db as any, table, due, options).compile();
      let index_ = 0;
      const text = compiled.sql.replace(/\?/g, () => {
        const value = compiled.parameters[index_++];
        return typeof value === 'number' ? String(value) : `'${String(value)}'`;
      });
      const plan = await sql.raw<{ detail: string }>(`explain query plan ${text}`).execute(t.deps.db);
      expect(plan.rows.map((row) => row.detail).join(' | '), table).toContain(`SCAN ${table} USING INDEX ${index}`);
    }
  });
});
