import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConnectionResolver } from '../src/ai/connection-resolver.js';
import { openSearchIndexes } from '../src/knowledge/search-indexes.js';
import { searchKnowledge } from '../src/knowledge/search-knowledge.js';
import { createEmbeddingJobs } from '../src/knowledge/embedding-jobs.js';
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

/**
 * IVF lists on SQLite (a low threshold here, 64 vectors, instead of 8,192): once trained, a
 * vector search probes the nearest lists only; it must still find a chunk from its own text.
 * On PostgreSQL the same searches run the exact scan and must agree too.
 */
describeEachDialect('search of large bases: IVF lists and the keyword term budget', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  it('trains lists past the threshold and still finds each chunk by its own text', async () => {
    const indexes = await openSearchIndexes(t.database, { ivfMinVectors: 64 });
    const jobs = createEmbeddingJobs({ db: t.deps.db, dialect, indexes, clock: t.clock, secretKey: t.deps.secretKey, httpAllow: [] });
    const base = (
      await t.request('POST', KB, {
        body: { data: { type: 'knowledge-base', attributes: { name: 'Large', chunk_size: 64, chunk_overlap: 0 } } },
      })
    ).body.data.id;
    for (let d = 0; d < 40; d++) {
      const paragraphs = Array.from(
        { length: 3 },
        (_, p) =>
          `Note ${d}.${p} on ${TOPICS[(d + p) % TOPICS.length]}: observation ${d * 7 + p} concerns ${TOPICS[(d * 3 + p) % TOPICS.length]} and item${d}x${p}.`,
      );
      await t.request('POST', `${KB}/${base}/documents`, {
        body: { data: { type: 'knowledge-document', attributes: { title: `doc ${d}`, content: paragraphs.join('\n\n') } } },
      });
    }
    for (
      let pass = 0;
      pass < 20 && (await Promise.all(jobs.map((job) => job.run(new AbortController().signal)))).some((n) => n > 0);
      pass++
    );
    const row = await t.deps.db.selectFrom('knowledge_bases').selectAll().where('id', '=', base).executeTakeFirstOrThrow();
    const texts = (
      await t.deps.db.selectFrom('knowledge_chunks').select('text').where('knowledge_base_id', '=', base).where('live', '=', true).execute()
    ).map((c) => c.text);
    expect(row.chunk_count).toBe(texts.length);
    expect(texts.length).toBeGreaterThanOrEqual(64);
    if (dialect === 'sqlite') {
      const lists = await sql<{ n: number }>`select count(*) as n from knowledge_ivf_centroids where knowledge_base_id = ${base}`.execute(
        t.deps.db,
      );
      expect(Number(lists.rows[0]!.n)).toBeGreaterThan(1);
      const partitions = await sql<{
        n: number;
      }>`select count(distinct knowledge_base_id) as n from knowledge_vectors_256 where knowledge_base_id like ${`${base}:%`}`.execute(
        t.deps.db,
      );
      expect(Number(partitions.rows[0]!.n)).toBeGreaterThan(1);
    }
    const context = { db: t.deps.db, dialect, indexes, resolver: new ConnectionResolver(t.deps.db, t.deps.secretKey), httpAllow: [] };
    for (const text of texts.filter((_, i) => i % 5 === 0)) {
      const [best] = await searchKnowledge(context, row, { query: text, topK: 3, mode: 'vector', filter: null });
      expect(best?.text, text).toBe(text);
    }
    // Deleting the base forgets its lists.
    expect((await t.request('DELETE', `${KB}/${base}`)).status).toBe(204);
    if (dialect === 'sqlite') {
      const left = await sql<{ n: number }>`select count(*) as n from knowledge_ivf_centroids where knowledge_base_id = ${base}`.execute(
        t.deps.db,
      );
      expect(Number(left.rows[0]!.n)).toBe(0);
    }
  });

  it('ranks the rarest query terms within the postings budget, so common words neither slow nor swamp a keyword search', async () => {
    const indexes = await openSearchIndexes(t.database, { keywordBudget: 3 });
    const jobs = createEmbeddingJobs({ db: t.deps.db, dialect, indexes, clock: t.clock, secretKey: t.deps.secretKey, httpAllow: [] });
    const base = (await t.request('POST', KB, { body: { data: { type: 'knowledge-base', attributes: { name: 'Common words' } } } })).body
      .data.id;
    for (let d = 0; d < 12; d++) {
      const content = d === 7 ? 'The workflow engine stores the zeppelin manifest.' : `The workflow engine stores record ${d}.`;
      await t.request('POST', `${KB}/${base}/documents`, {
        body: { data: { type: 'knowledge-document', attributes: { title: `doc ${d}`, content } } },
      });
    }
    for (
      let pass = 0;
      pass < 10 && (await Promise.all(jobs.map((job) => job.run(new AbortController().signal)))).some((n) => n > 0);
      pass++
    );
    const row = await t.deps.db.selectFrom('knowledge_bases').selectAll().where('id', '=', base).executeTakeFirstOrThrow();
    const context = { db: t.deps.db, dialect, indexes, resolver: new ConnectionResolver(t.deps.db, t.deps.secretKey), httpAllow: [] };
    const results = await searchKnowledge(context, row, {
      query: 'workflow engine stores zeppelin manifest',
      topK: 3,
      mode: 'keyword',
      filter: null,
    });
    expect(results[0]?.text).toBe('The workflow engine stores the zeppelin manifest.');
    // On SQLite only the rarest terms (zeppelin, manifest) were ranked: the other documents do not match them.
    if (dialect === 'sqlite') expect(results).toHaveLength(1);
    else expect(results.length).toBeGreaterThan(1);

    // The terms' document frequencies are remembered until the index changes: once "zeppelin"
    // is everywhere, "manifest" is the rarest and the only document with it is found alone.
    for (let d = 12; d < 18; d++) {
      await t.request('POST', `${KB}/${base}/documents`, {
        body: {
          data: { type: 'knowledge-document', attributes: { title: `doc ${d}`, content: `A zeppelin zeppelin flies over record ${d}.` } },
        },
      });
    }
    for (
      let pass = 0;
      pass < 10 && (await Promise.all(jobs.map((job) => job.run(new AbortController().signal)))).some((n) => n > 0);
      pass++
    );
    const again = await searchKnowledge(context, row, {
      query: 'workflow engine stores zeppelin manifest',
      topK: 3,
      mode: 'keyword',
      filter: null,
    });
    expect(again[0]?.text).toBe('The workflow engine stores the zeppelin manifest.');
    if (dialect === 'sqlite')
      expect(again.map((r) => r.text)).toEqual(
        [
          'The workflow engine stores the zeppelin manifest.',
          'A zeppelin zeppelin flies over record 12.',
          'A zeppelin zeppelin flies over record 13.',
        ].slice(0, again.length),
      );
  });

  it('ranks a rare term with a common one as the OR of both would, scoring only the rows of the rare term when that is enough', async () => {
    const indexes = await openSearchIndexes(t.database, { keywordBudget: 3 });
    const jobs = createEmbeddingJobs({ db: t.deps.db, dialect, indexes, clock: t.clock, secretKey: t.deps.secretKey, httpAllow: [] });
    const base = (await t.request('POST', KB, { body: { data: { type: 'knowledge-base', attributes: { name: 'Rare and common' } } } })).body
      .data.id;
    for (let d = 0; d < 16; d++) {
      const content =
        d < 3
          ? `Zephyr note ${d}: the zephyr crossed the bay.`
          : `Note ${d} on ${TOPICS[d % TOPICS.length]}${d % 4 === 0 ? ', note upon note' : ''}.`;
      await t.request('POST', `${KB}/${base}/documents`, {
        body: { data: { type: 'knowledge-document', attributes: { title: `rare ${d}`, content } } },
      });
    }
    for (
      let pass = 0;
      pass < 10 && (await Promise.all(jobs.map((job) => job.run(new AbortController().signal)))).some((n) => n > 0);
      pass++
    );
    // "note" is past the budget of 3 on its own: the rows of "zephyr" are scored in two parts; with
    // k = 2 the bound lets them answer, with k = 10 there are too few of them and the OR is ranked whole.
    for (const k of [2, 10]) {
      const hits = await indexes.keyword(t.deps.db, base, ['zephyr', 'note'], k, null);
      expect(hits.length).toBe(Math.min(k, 16));
      if (dialect === 'sqlite') {
        const reference = await sql<{ seq: number; score: number }>`
          select f.rowid as seq, -f.rank as score from knowledge_chunks_fts f where knowledge_chunks_fts match '"zephyr" OR "note"' and f.kb = ${base} order by f.rank limit ${k}`.execute(
          t.deps.db,
        );
        expect(hits.map((hit) => hit.seq)).toEqual(reference.rows.map((row) => Number(row.seq)));
        hits.forEach((hit, i) => expect(hit.score).toBeCloseTo(Number(reference.rows[i]!.score), 9));
      }
    }
  });

  it("ranks a base's keyword matches the same whether it holds most of the index or a little of it (SQLite ranks the whole index first for a large share)", async () => {
    const indexes = await openSearchIndexes(t.database);
    const jobs = createEmbeddingJobs({ db: t.deps.db, dialect, indexes, clock: t.clock, secretKey: t.deps.secretKey, httpAllow: [] });
    const createBase = async (name: string) =>
      (await t.request('POST', KB, { body: { data: { type: 'knowledge-base', attributes: { name } } } })).body.data.id as string;
    const large = await createBase('Most of the index');
    const small = await createBase('A little of it');
    // The large base's documents mention the harbour once; the small base's mention it often,
    // so the best matches of the whole index are the small base's.
    for (let d = 0; d < 120; d++) {
      const content =
        d % 10 === 0 ? `Harbour log ${d}: calm near pier ${d}.` : `Field note ${d} about ${TOPICS[d % TOPICS.length]} and item ${d}.`;
      await t.request('POST', `${KB}/${large}/documents`, {
        body: { data: { type: 'knowledge-document', attributes: { title: `large ${d}`, content } } },
      });
    }
    for (let d = 0; d < 30; d++) {
      await t.request('POST', `${KB}/${small}/documents`, {
        body: {
          data: {
            type: 'knowledge-document',
            attributes: { title: `small ${d}`, content: `Harbour harbour harbour ${d}: the harbour pilot and the harbour master.` },
          },
        },
      });
    }
    for (
      let pass = 0;
      pass < 20 && (await Promise.all(jobs.map((job) => job.run(new AbortController().signal)))).some((n) => n > 0);
      pass++
    );
    // k = 3 on the large base: the whole index's best few are all the small base's, so the
    // ranking falls back to filtering by base as it goes.
    for (const [base, k, expected] of [
      [large, 50, 12],
      [large, 3, 3],
      [small, 50, 30],
    ] as const) {
      const hits = await indexes.keyword(t.deps.db, base, ['harbour'], k, null);
      expect(hits).toHaveLength(expected);
      const owners = await t.deps.db
        .selectFrom('knowledge_chunks')
        .select('knowledge_base_id')
        .where(
          'seq',
          'in',
          hits.map((hit) => hit.seq),
        )
        .execute();
      expect(owners.every((owner) => owner.knowledge_base_id === base)).toBe(true);
      // Best first, as the filtered ranking orders them.
      const scores = hits.map((hit) => hit.score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
      if (dialect === 'sqlite') {
        const reference = await sql<{ seq: number }>`
          select f.rowid as seq from knowledge_chunks_fts f where knowledge_chunks_fts match '"harbour"' and f.kb = ${base} order by f.rank limit ${k}`.execute(
          t.deps.db,
        );
        expect(hits.map((hit) => hit.seq)).toEqual(reference.rows.map((row) => Number(row.seq)));
      }
    }
  });
});
