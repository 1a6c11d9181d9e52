import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { StagedHandoff } from '../src/knowledge/staged-handoff.js';
import { KnowledgeChunkRepository, type KnowledgeChunkRow } from '../src/store/knowledge-chunk-repository.js';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const KB = '/api/v1/knowledge-bases';
const row = (seq: number) => ({ seq, text: `chunk ${seq}` }) as unknown as KnowledgeChunkRow;
const rows = (from: number, count: number) => Array.from({ length: count }, (_, i) => row(from + i));

describe('staged hand-off', () => {
  it("hands a version's rows over once; a newer version replaces an older one", () => {
    const handoff = new StagedHandoff();
    handoff.put('doc', 2, rows(1, 3));
    // A loop still at version 1 gets nothing, and leaves version 2 in place.
    expect(handoff.take('doc', 1)).toBeUndefined();
    expect(handoff.take('doc', 2)?.map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(handoff.take('doc', 2)).toBeUndefined();
    expect(handoff.size).toBe(0);
    handoff.put('doc', 3, rows(1, 3));
    handoff.put('doc', 4, rows(4, 2));
    expect(handoff.size).toBe(2);
    expect(handoff.take('doc', 3)).toBeUndefined();
    expect(handoff.take('doc', 4)?.map((r) => r.seq)).toEqual([4, 5]);
    // A loop at a newer version than the entry's (the entry is stale) drops it.
    handoff.put('old', 1, rows(1, 2));
    expect(handoff.take('old', 2)).toBeUndefined();
    expect(handoff.size).toBe(0);
    handoff.put('gone', 1, rows(1, 2));
    handoff.forget('gone');
    expect(handoff.take('gone', 1)).toBeUndefined();
  });

  it('makes room by dropping the oldest entries, and holds no document larger than its bound', () => {
    const handoff = new StagedHandoff(10);
    handoff.put('a', 1, rows(1, 4));
    handoff.put('b', 1, rows(5, 4));
    handoff.put('c', 1, rows(9, 4));
    expect(handoff.size).toBe(8);
    expect(handoff.take('a', 1)).toBeUndefined();
    expect(handoff.take('b', 1)).toHaveLength(4);
    handoff.put('big', 1, rows(20, 11));
    expect(handoff.take('big', 1)).toBeUndefined();
    expect(handoff.take('c', 1)).toHaveLength(4);
    // Putting a document again replaces its entry (and counts it once).
    handoff.put('d', 1, rows(1, 2));
    handoff.put('d', 2, rows(3, 2));
    expect(handoff.size).toBe(2);
    expect(handoff.take('d', 2)?.map((r) => r.seq)).toEqual([3, 4]);
  });

  it('holds nothing once disabled (a process without an embedding loop)', () => {
    const handoff = new StagedHandoff();
    handoff.put('a', 1, rows(1, 2));
    handoff.disable();
    expect(handoff.size).toBe(0);
    handoff.put('b', 1, rows(1, 2));
    expect(handoff.take('b', 1)).toBeUndefined();
  });
});

describeEachDialect('staged chunks handed from the ingest to the embedding loop', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterEach(() => vi.restoreAllMocks());
  afterAll(() => t.close());

  const createBase = async (name: string) =>
    (await t.request('POST', KB, { body: { data: { type: 'knowledge-base', attributes: { name, chunk_size: 32, chunk_overlap: 0 } } } }))
      .body.data.id as string;
  const content =
    '# Backups\n\nBackups run every night at two and are kept for thirty days. Nobody restores them by hand.\n\n## Restores\n\nA restore takes about ten minutes per gigabyte of data, measured on the staging cluster last spring.\n';
  const ingest = async (baseId: string, text = content) => {
    const res = await t.request('POST', `${KB}/${baseId}/documents`, {
      body: { data: { type: 'knowledge-document', attributes: { title: 'Backups', content: text } } },
    });
    expect(res.status).toBeLessThan(300);
    return res.body.data as { id: string; attributes: { version?: number } };
  };
  const statusOf = async (baseId: string, id: string) => (await t.request('GET', `${KB}/${baseId}/documents/${id}`)).body.data.attributes;
  const search = async (baseId: string, query: string) =>
    (await t.request('POST', `${KB}/${baseId}/search`, { body: { data: { query, mode: 'keyword' } } })).body.results as {
      text: string;
      document_id: string;
    }[];

  it('hands over exactly the rows the ingest committed, and the loop swaps them in without reading them back', async () => {
    const baseId = await createBase('Handed');
    const doc = await ingest(baseId);
    const handed = t.deps.stagedHandoff.take(doc.id, 1)!;
    expect(handed.length).toBeGreaterThan(1);
    const stored = await new KnowledgeChunkRepository(t.deps.db, t.workspaces.main).staged(doc.id, 1);
    const shape = (r: KnowledgeChunkRow) => ({
      seq: Number(r.seq),
      id: r.id,
      position: r.position,
      text: r.text,
      heading_path: r.heading_path,
      tokens: r.tokens,
      version: r.document_version,
      embedding: r.embedding,
      key: r.embedding_key,
    });
    expect(handed.map(shape)).toEqual(stored.map(shape));
    t.deps.stagedHandoff.put(doc.id, 1, handed);

    const read = vi.spyOn(KnowledgeChunkRepository.prototype, 'staged');
    await t.deps.background.drain();
    expect(read).not.toHaveBeenCalled();
    expect(t.deps.stagedHandoff.size).toBe(0);
    expect(await statusOf(baseId, doc.id)).toMatchObject({ status: 'ready', chunk_count: handed.length });
    expect((await search(baseId, 'gigabyte restore'))[0]?.text).toContain('ten minutes per gigabyte');
  });

  it('reads the staged rows from the database when nothing was handed over (another process, a restart)', async () => {
    const baseId = await createBase('Read back');
    const doc = await ingest(baseId);
    expect(t.deps.stagedHandoff.take(doc.id, 1)).toBeDefined();
    const read = vi.spyOn(KnowledgeChunkRepository.prototype, 'staged');
    await t.deps.background.drain();
    expect(read).toHaveBeenCalledTimes(1);
    expect(await statusOf(baseId, doc.id)).toMatchObject({ status: 'ready' });
    expect((await search(baseId, 'gigabyte restore'))[0]?.text).toContain('ten minutes per gigabyte');
  });

  it("swaps in the newest version when a replaced version's rows were handed over first", async () => {
    const baseId = await createBase('Replaced');
    const first = await ingest(baseId);
    const second = await ingest(baseId, content.replace('ten minutes', 'twelve minutes'));
    expect(second.id).toBe(first.id);
    await t.deps.background.drain();
    expect(t.deps.stagedHandoff.size).toBe(0);
    const results = await search(baseId, 'gigabyte restore');
    expect(results.map((r) => r.text).join(' ')).toContain('twelve minutes');
    expect(results.map((r) => r.text).join(' ')).not.toContain('ten minutes');
  });
});
