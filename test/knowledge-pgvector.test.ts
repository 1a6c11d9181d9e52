import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinEmbed } from '../src/ai/builtin-embedder.js';
import { exactNearest } from '../src/knowledge/search-sql.js';
import { TEST_DATABASE_URL } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * PostgreSQL with pgvector: vectors in `knowledge_vectors_<dim>` with an HNSW index. Runs where
 * the PostgreSQL server offers the `vector` extension (.ci/run builds it from Debian's pgvector
 * source); elsewhere it is skipped, unless SWITCHYARD_TEST_PGVECTOR=required (CI), where its
 * absence fails. The other knowledge tests run on pgvector too where it is installed, and
 * knowledge-exact-index.test.ts keeps the exact scan covered.
 */
const required = process.env.SWITCHYARD_TEST_PGVECTOR === 'required';
const KB = '/api/v1/knowledge-bases';
const TOPICS = ['lighthouse keepers', 'sourdough starters', 'glacier retreat', 'chess openings', 'honeybee colonies', 'tidal energy'];

describe.skipIf(!TEST_DATABASE_URL && !required)('knowledge search on pgvector [postgres]', () => {
  let t: TestApp;
  let available = false;
  let base: string;
  const documents = new Map<string, string>();

  beforeAll(async () => {
    if (!TEST_DATABASE_URL) throw new Error('SWITCHYARD_TEST_PGVECTOR=required needs SWITCHYARD_TEST_DATABASE_URL');
    t = await createTestApp('postgres');
    available = (await sql`select 1 from pg_available_extensions where name = 'vector'`.execute(t.deps.db)).rows.length > 0;
    if (!available && required) throw new Error('SWITCHYARD_TEST_PGVECTOR=required, but this PostgreSQL server offers no vector extension');
    if (!available) {
      console.warn('pgvector tests skipped: the PostgreSQL server offers no vector extension (see .ci/run)');
      return;
    }
    base = (
      await t.request('POST', KB, {
        body: { data: { type: 'knowledge-base', attributes: { name: 'Vectors', chunk_size: 64, chunk_overlap: 0 } } },
      })
    ).body.data.id;
    for (const [i, topic] of TOPICS.entries()) {
      const content = Array.from(
        { length: 4 },
        (_, j) => `## ${topic} part ${j}\n\nNotes on ${topic}, item ${i}x${j}: how ${topic} change over a season and what to record.`,
      ).join('\n\n');
      const res = await t.request('POST', `${KB}/${base}/documents`, {
        body: { data: { type: 'knowledge-document', attributes: { title: topic, content } } },
      });
      documents.set(topic, res.body.data.id);
    }
    await t.deps.background.drain();
  });
  afterAll(() => t?.close());

  const vectorSearch = async (query: string, topK = 5) =>
    (await t.request('POST', `${KB}/${base}/search`, { body: { data: { query, mode: 'vector', top_k: topK } } })).body.results as {
      chunk_id: string;
      document_id: string;
      score: number;
    }[];
  const seqsOf = async (chunkIds: string[]) =>
    (await t.deps.db.selectFrom('knowledge_chunks').select(['id', 'seq']).where('id', 'in', chunkIds).execute()).map((row) => ({
      id: row.id,
      seq: Number(row.seq),
    }));

  it('is chosen at start, reported by /readyz, and indexes vectors with HNSW', async (ctx) => {
    if (!available) ctx.skip();
    expect(t.deps.vectorMode).toBe('pgvector');
    expect((await t.request('GET', '/readyz', { token: null })).body).toMatchObject({ vector_search: 'pgvector' });
    const indexes = await sql<{ indexdef: string }>`select indexdef from pg_indexes where tablename = 'knowledge_vectors_256'`.execute(
      t.deps.db,
    );
    expect(indexes.rows.map((row) => row.indexdef).join('\n')).toMatch(/USING hnsw \(embedding vector_cosine_ops\)/);
    const counted = await sql<{ n: string }>`select count(*) as n from knowledge_vectors_256 where knowledge_base_id = ${base}`.execute(
      t.deps.db,
    );
    expect(Number(counted.rows[0]!.n)).toBe(TOPICS.length * 4);
  });

  it('answers the neighbours and scores of the exact scan in SQL', async (ctx) => {
    if (!available) ctx.skip();
    for (const query of ['glacier retreat season', 'honeybee colonies', 'chess openings item3x2', 'what to record']) {
      const results = await vectorSearch(query);
      expect(results).toHaveLength(5);
      const exact = await exactNearest(t.deps.db, 'postgres', base, builtinEmbed(query), 5, null);
      const seqs = await seqsOf(results.map((r) => r.chunk_id));
      const seqOf = new Map(seqs.map((row) => [row.id, row.seq]));
      expect(results.map((r) => seqOf.get(r.chunk_id))).toEqual(exact.map((hit) => hit.seq));
      for (const [i, r] of results.entries()) expect(r.score).toBeCloseTo(exact[i]!.score, 5);
    }
  });

  it("takes a replaced document's old vectors and a deleted document's out of the index", async (ctx) => {
    if (!available) ctx.skip();
    const topic = 'tidal energy';
    const vectorsLeft = async (seqs: number[]) =>
      Number(
        (await sql<{ n: string }>`select count(*) as n from knowledge_vectors_256 where seq = any(${seqs}::bigint[])`.execute(t.deps.db))
          .rows[0]!.n,
      );
    const before = (await vectorSearch(topic)).filter((r) => r.document_id === documents.get(topic));
    const oldSeqs = (await seqsOf(before.map((r) => r.chunk_id))).map((row) => row.seq);
    expect(oldSeqs.length).toBeGreaterThan(0);
    expect(await vectorsLeft(oldSeqs)).toBe(oldSeqs.length);
    await t.request('POST', `${KB}/${base}/documents`, {
      body: {
        data: {
          type: 'knowledge-document',
          attributes: { title: topic, content: '## Turbines\n\nUnderwater turbines under the harbour bridge.' },
        },
      },
    });
    await t.deps.background.drain();
    const replaced = await vectorSearch('underwater turbines harbour bridge', 3);
    expect(replaced[0]!.document_id).toBe(documents.get(topic));
    expect(await vectorsLeft(oldSeqs)).toBe(0);

    const gone = documents.get('chess openings')!;
    const chessSeqs = (
      await seqsOf((await vectorSearch('chess openings', 10)).filter((r) => r.document_id === gone).map((r) => r.chunk_id))
    ).map((row) => row.seq);
    expect(chessSeqs.length).toBeGreaterThan(0);
    expect((await t.request('DELETE', `${KB}/${base}/documents/${gone}`)).status).toBe(204);
    expect(await vectorsLeft(chessSeqs)).toBe(0);
    expect((await vectorSearch('chess openings', 10)).some((r) => r.document_id === gone)).toBe(false);
  });
});
