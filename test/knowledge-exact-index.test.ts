import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinEmbed } from '../src/ai/builtin-embedder.js';
import { createEmbeddingJobs } from '../src/knowledge/embedding-jobs.js';
import { scanTopK } from '../src/knowledge/search-indexes-exact.js';
import { openSearchIndexes, type SearchIndexes } from '../src/knowledge/search-indexes.js';
import { exactNearest } from '../src/knowledge/search-sql.js';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const KB = '/api/v1/knowledge-bases';
const TOPICS = [
  'lighthouse keepers',
  'sourdough starters',
  'glacier retreat',
  'chess openings',
  'honeybee colonies',
  'tidal energy',
  'violin making',
  'desert botany',
];
const QUERIES = [
  'glacier retreat observation',
  'honeybee colonies and violin making',
  'chess openings',
  'tidal energy item3x1',
  'sourdough',
];

describe('scanTopK', () => {
  it('answers the k best dot products, best first, ties by the lower seq', () => {
    const vectors = Float32Array.from([1, 0, 0, 1, 0.6, 0.8, 1, 0, -1, 0]);
    const seqs = [40, 30, 20, 10, 50];
    expect(scanTopK(vectors, seqs, 2, Float32Array.from([1, 0]), 3)).toEqual([
      { seq: 10, score: 1 },
      { seq: 40, score: 1 },
      { seq: 20, score: expect.closeTo(0.6, 6) as number },
    ]);
    expect(scanTopK(vectors, seqs, 2, Float32Array.from([0, 1]), 10).map((hit) => hit.seq)).toEqual([30, 20, 10, 40, 50]);
  });
});

/**
 * Vector search agrees with the exact scan in SQL on both dialects. On PostgreSQL the exact
 * scan (forced here even where pgvector is installed: `pgvector: false`) runs over a copy in
 * memory per process: each "process" here is its own
 * SearchIndexes, and every change made through another one (ingest, replace, delete, a
 * re-embedding's swap, rows lost from knowledge_exact_vectors) shows in the next search.
 */
describeEachDialect('exact vector search', (dialect) => {
  let t: TestApp;
  let writer: SearchIndexes;
  let base: string;
  const documents = new Map<string, string>();

  beforeAll(async () => {
    t = await createTestApp(dialect, { pgvector: false });
    writer = await openSearchIndexes(t.database, { pgvector: false });
    base = (
      await t.request('POST', KB, {
        body: { data: { type: 'knowledge-base', attributes: { name: 'Exact', chunk_size: 64, chunk_overlap: 0 } } },
      })
    ).body.data.id;
  });
  afterAll(() => t.close());

  const embedAll = async () => {
    const jobs = createEmbeddingJobs({
      db: t.deps.db,
      dialect,
      indexes: writer,
      clock: t.clock,
      secretKey: t.deps.secretKey,
      httpAllow: [],
    });
    for (
      let pass = 0;
      pass < 20 && (await Promise.all(jobs.map((job) => job.run(new AbortController().signal)))).some((n) => n > 0);
      pass++
    );
  };
  const ingest = async (from: number, to: number, variant = '') => {
    for (let d = from; d < to; d++) {
      const paragraphs = Array.from(
        { length: 3 },
        (_, p) =>
          `Note ${d}.${p}${variant} on ${TOPICS[(d + p) % TOPICS.length]}: observation ${d * 7 + p} concerns ${TOPICS[(d * 3 + p) % TOPICS.length]} and item${d}x${p}.`,
      );
      const created = await t.request('POST', `${KB}/${base}/documents`, {
        body: { data: { type: 'knowledge-document', attributes: { title: `doc ${d}`, content: paragraphs.join('\n\n') } } },
      });
      documents.set(`doc ${d}`, created.body.data.id);
    }
    await embedAll();
  };
  /** Each index's answer against the SQL scan of the chunks' own vectors. */
  const expectExact = async (...readers: SearchIndexes[]) => {
    for (const query of QUERIES) {
      const vector = builtinEmbed(query);
      const expected = await exactNearest(t.deps.db, dialect, base, vector, 5, null);
      expect(expected).toHaveLength(5);
      for (const reader of readers) {
        const found = await reader.nearest(t.deps.db, base, 256, vector, 5, null);
        expect(
          found.map((hit) => hit.seq),
          query,
        ).toEqual(expected.map((hit) => hit.seq));
        for (const [i, hit] of found.entries()) expect(hit.score).toBeCloseTo(expected[i]!.score, 4);
      }
    }
  };
  const mirrorRows = async () =>
    Number(
      (await sql<{ n: string }>`select count(*) as n from knowledge_exact_vectors where knowledge_base_id = ${base}`.execute(t.deps.db))
        .rows[0]!.n,
    );
  const chunkCount = async () =>
    (await t.deps.db.selectFrom('knowledge_bases').select('chunk_count').where('id', '=', base).executeTakeFirstOrThrow()).chunk_count;

  it('finds what the SQL scan finds, and sees ingest, replacement and deletion made elsewhere', async () => {
    const a = await openSearchIndexes(t.database, { pgvector: false });
    const b = await openSearchIndexes(t.database, { pgvector: false });
    expect(a.vectorMode).toBe(dialect === 'sqlite' ? 'sqlite-vec' : 'exact');
    await ingest(0, 12);
    await expectExact(a, b);
    // More documents, a replaced one and a deleted one, all through other indexes than a's and b's.
    await ingest(12, 20);
    await ingest(3, 4, ' revised');
    expect((await t.request('DELETE', `${KB}/${base}/documents/${documents.get('doc 5')}`)).status).toBe(204);
    await expectExact(a, b);
    const best = await a.nearest(
      t.deps.db,
      base,
      256,
      builtinEmbed('Note 3.1 revised on chess openings: observation 22 concerns chess openings and item3x1.'),
      1,
      null,
    );
    const text = await t.deps.db.selectFrom('knowledge_chunks').select('text').where('seq', '=', best[0]!.seq).executeTakeFirstOrThrow();
    expect(text.text).toContain('Note 3.1 revised');
    if (dialect === 'postgres') expect(await mirrorRows()).toBe(await chunkCount());
  });

  it.runIf(dialect === 'postgres')('copies a base again when its rows are missing, and scans in SQL past the memory budget', async () => {
    const a = await openSearchIndexes(t.database, { pgvector: false });
    await expectExact(a);
    // Rows lost (written while another process ran with pgvector, or before migration 0011).
    await sql`delete from knowledge_exact_vectors where seq in (select seq from knowledge_exact_vectors where knowledge_base_id = ${base} limit 7)`.execute(
      t.deps.db,
    );
    await sql`update knowledge_bases set index_version = index_version + 1 where id = ${base}`.execute(t.deps.db);
    await expectExact(a);
    expect(await mirrorRows()).toBe(await chunkCount());
    const tiny = await openSearchIndexes(t.database, { exactCacheBytes: 1024, pgvector: false });
    await expectExact(tiny);
  });

  it.runIf(dialect === 'postgres')('a re-embedding swap made by another process replaces the vectors held in memory', async () => {
    const a = await openSearchIndexes(t.database, { pgvector: false });
    await expectExact(a);
    const rows = await t.deps.db
      .selectFrom('knowledge_chunks')
      .select(['seq', 'text'])
      .where('knowledge_base_id', '=', base)
      .where('live', '=', true)
      .orderBy('seq')
      .execute();
    // "New model": each chunk's vector is the built-in vector of its text reversed.
    const vectors = rows.map((row) => builtinEmbed(row.text).reverse());
    await t.deps.db.transaction().execute(async (trx) => {
      await writer.replaceVectors(
        trx,
        base,
        256,
        rows.map((row) => Number(row.seq)),
        256,
        vectors,
      );
      for (const [i, row] of rows.entries())
        await sql`update knowledge_chunks set embedding = ${Array.from(vectors[i]!)} where seq = ${row.seq}`.execute(trx);
    });
    await expectExact(a);
  });
});
