import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinEmbed } from '../src/ai/builtin-embedder.js';
import { ConnectionResolver } from '../src/ai/connection-resolver.js';
import { createEmbeddingJobs } from '../src/knowledge/embedding-jobs.js';
import { openSearchIndexes } from '../src/knowledge/search-indexes.js';
import { searchKnowledge } from '../src/knowledge/search-knowledge.js';
import { VectorReader } from '../src/knowledge/vector-reader.js';
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
 * SQLite only: the vector reader is a second, read-only connection to the database file on a
 * thread of its own (knowledge/vector-reader.ts); PostgreSQL has no counterpart (its queries do
 * not block the event loop). Its scans must answer exactly what the serving connection's do.
 */
describe('vector scans on the reader thread [sqlite]', () => {
  let t: TestApp;
  let baseId: string;
  beforeAll(async () => {
    t = await createTestApp('sqlite', { sqliteFile: true });
    baseId = (
      await t.request('POST', KB, {
        body: { data: { type: 'knowledge-base', attributes: { name: 'Reader', chunk_size: 64, chunk_overlap: 0 } } },
      })
    ).body.data.id;
    for (let d = 0; d < 40; d++) {
      const paragraphs = Array.from(
        { length: 3 },
        (_, p) =>
          `Note ${d}.${p} on ${TOPICS[(d + p) % TOPICS.length]}: observation ${d * 7 + p} concerns ${TOPICS[(d * 3 + p) % TOPICS.length]} and item${d}x${p}.`,
      );
      await t.request('POST', `${KB}/${baseId}/documents`, {
        body: { data: { type: 'knowledge-document', attributes: { title: `doc ${d}`, content: paragraphs.join('\n\n') } } },
      });
    }
  });
  afterAll(() => t.close());

  it('answers the same neighbours and scores as the serving connection, with and without IVF lists, and a hybrid search the same results', async () => {
    for (const ivfMinVectors of [1_000_000, 64]) {
      const reading = await openSearchIndexes(t.database, { ivfMinVectors });
      const inline = await openSearchIndexes(t.database, { ivfMinVectors, vectorReader: false });
      const jobs = createEmbeddingJobs({
        db: t.deps.db,
        dialect: 'sqlite',
        indexes: reading,
        clock: t.clock,
        secretKey: t.deps.secretKey,
        httpAllow: [],
      });
      // The second round's swap crosses the low threshold: the base's vectors are filed into lists.
      if (ivfMinVectors === 64)
        await t.request('POST', `${KB}/${baseId}/documents`, {
          body: {
            data: {
              type: 'knowledge-document',
              attributes: { title: 'one more', content: 'Note on lighthouse keepers and glacier retreat.' },
            },
          },
        });
      for (
        let pass = 0;
        pass < 20 && (await Promise.all(jobs.map((job) => job.run(new AbortController().signal)))).some((n) => n > 0);
        pass++
      );
      const partitions = await sql<{
        n: number;
      }>`select count(distinct knowledge_base_id) as n from knowledge_vectors_256 where knowledge_base_id like ${`${baseId}%`}`.execute(
        t.deps.db,
      );
      expect(Number(partitions.rows[0]!.n) > 1).toBe(ivfMinVectors === 64);
      expect(await reading.ready!()).toBe(true);
      expect(await inline.ready!()).toBe(false);
      const base = await t.deps.db.selectFrom('knowledge_bases').selectAll().where('id', '=', baseId).executeTakeFirstOrThrow();
      const queries = ['glacier retreat observation', 'violin making and chess openings', 'item3x1', 'honeybee colonies note 12'];
      for (const query of queries) {
        const vector = builtinEmbed(query);
        // Twice through the reader: the first scan may still go inline while the thread starts.
        await reading.nearest(t.deps.db, baseId, 256, vector, 10, null);
        const viaReader = await reading.nearest(t.deps.db, baseId, 256, vector, 10, null);
        const viaConnection = await inline.nearest(t.deps.db, baseId, 256, vector, 10, null);
        expect(viaReader.map((hit) => hit.seq)).toEqual(viaConnection.map((hit) => hit.seq));
        viaReader.forEach((hit, i) => expect(hit.score).toBeCloseTo(viaConnection[i]!.score, 6));
        expect(viaReader.length).toBe(10);
        const context = (indexes: typeof reading) => ({
          db: t.deps.db,
          dialect: 'sqlite' as const,
          indexes,
          resolver: new ConnectionResolver(t.deps.db, t.deps.secretKey),
          httpAllow: [],
        });
        const hybrid = await searchKnowledge(context(reading), base, { query, topK: 5, mode: 'hybrid', filter: null });
        expect(hybrid).toEqual(await searchKnowledge(context(inline), base, { query, topK: 5, mode: 'hybrid', filter: null }));
        expect(hybrid.length).toBe(5);
      }
      await reading.close!();
    }
  });

  it('sees a swap committed on the serving connection at once, and leaves a scan inside a transaction to that connection', async () => {
    const indexes = await openSearchIndexes(t.database);
    const jobs = createEmbeddingJobs({
      db: t.deps.db,
      dialect: 'sqlite',
      indexes,
      clock: t.clock,
      secretKey: t.deps.secretKey,
      httpAllow: [],
    });
    expect(await indexes.ready!()).toBe(true);
    const text = 'A quokka photographed on Rottnest island at dawn.';
    const query = builtinEmbed('quokka photographed rottnest island');
    await indexes.nearest(t.deps.db, baseId, 256, query, 1, null);
    await t.request('POST', `${KB}/${baseId}/documents`, {
      body: { data: { type: 'knowledge-document', attributes: { title: 'quokka', content: text } } },
    });
    for (
      let pass = 0;
      pass < 10 && (await Promise.all(jobs.map((job) => job.run(new AbortController().signal)))).some((n) => n > 0);
      pass++
    );
    const seq = (
      await t.deps.db
        .selectFrom('knowledge_chunks')
        .select('seq')
        .where('text', '=', text)
        .where('live', '=', true)
        .executeTakeFirstOrThrow()
    ).seq;
    expect((await indexes.nearest(t.deps.db, baseId, 256, query, 1, null))[0]?.seq).toBe(Number(seq));

    // Rows written inside a transaction are visible to its own scan (the reader cannot see them).
    await t.deps.db
      .transaction()
      .execute(async (trx) => {
        await indexes.remove(trx, baseId, 256, [Number(seq)]);
        const inside = await indexes.nearest(trx, baseId, 256, query, 3, null);
        expect(inside.map((hit) => hit.seq)).not.toContain(Number(seq));
        throw new Error('roll back');
      })
      .catch((error: unknown) => expect((error as Error).message).toBe('roll back'));
    expect((await indexes.nearest(t.deps.db, baseId, 256, query, 1, null))[0]?.seq).toBe(Number(seq));
    await indexes.close!();
  });

  it('falls back to the serving connection when the thread is gone or cannot open the file', async () => {
    const indexes = await openSearchIndexes(t.database);
    expect(await indexes.ready!()).toBe(true);
    const query = builtinEmbed('tidal energy observation');
    const before = await indexes.nearest(t.deps.db, baseId, 256, query, 5, null);
    await indexes.close!();
    expect(await indexes.nearest(t.deps.db, baseId, 256, query, 5, null)).toEqual(before);

    const missing = new VectorReader('/nonexistent/switchyard.db');
    expect(await missing.whenReady()).toBe(false);
    expect(missing.knn('knowledge_vectors_256', [baseId], query, 5)).toBeNull();
    await missing.close();
  });
});
