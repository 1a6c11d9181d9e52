import { sql } from 'kysely';
import { and, keywordQuery, metadataConditions, type Db, type MetadataFilter, type ScoredSeq } from './search-sql.js';

/**
 * Keyword search on SQLite: FTS5 (`knowledge_chunks_fts`, migration 0008), bm25, over the
 * query's rarest terms.
 *
 * The postings a search may rank, at most (plus the rarest two terms whatever they cost). FTS5
 * scores every row that matches any term before it can sort, so a query of common words over
 * 100,000 chunks scored tens of thousands of rows; the rarest terms carry nearly all of bm25's
 * weight (inverse document frequency), so common ones past the budget are dropped.
 */
export const KEYWORD_POSTINGS_BUDGET = 5000;

/** Stems and term statistics remembered across searches (one per connection: the temp tables live in its temp schema). */
export interface KeywordState {
  ready: boolean;
  budget: number;
  /**
   * Changes whenever the FTS table may have changed (this process's writes to it, another
   * connection's commits); null: nothing is remembered between searches.
   */
  version: (() => string) | null;
  /** The stems of query words (the tokenizer's, so they never go stale). */
  stems: Map<string, string[]>;
  /** Per stem, the rows that hold it, and the chunks of each base; valid at `statsVersion`. */
  postings: Map<string, number>;
  chunks: Map<string, number> | null;
  statsVersion: string | null;
}

/** Distinct words and stems remembered, at most. */
const MAX_REMEMBERED = 10_000;

export function keywordState(budget: number, version: (() => string) | null): KeywordState {
  return { ready: false, budget, version, stems: new Map(), postings: new Map(), chunks: null, statsVersion: null };
}

/** The statistics remembered, emptied when the FTS table may have changed since they were read. */
function freshStats(state: KeywordState): boolean {
  const version = state.version?.() ?? null;
  if (version === null || version !== state.statsVersion || state.postings.size > MAX_REMEMBERED) {
    state.postings.clear();
    state.chunks = null;
    state.statsVersion = version;
  }
  return version !== null;
}

async function stemsOf(db: Db, words: string[], state: KeywordState): Promise<Map<string, string[]>> {
  const missing = words.filter((word) => !state.stems.has(word));
  if (missing.length > 0) {
    if (!state.ready) {
      // Stemming through an FTS5 table of the same tokenizer gives the exact terms the index holds.
      await sql`create virtual table if not exists temp.knowledge_query_terms using fts5(body, tokenize='porter unicode61 remove_diacritics 2')`.execute(
        db,
      );
      await sql`create virtual table if not exists temp.knowledge_query_stems using fts5vocab(temp, knowledge_query_terms, instance)`.execute(
        db,
      );
      await sql`create virtual table if not exists temp.knowledge_chunks_vocab using fts5vocab(main, knowledge_chunks_fts, row)`.execute(
        db,
      );
      state.ready = true;
    }
    await sql`delete from temp.knowledge_query_terms`.execute(db);
    await sql`insert into temp.knowledge_query_terms (rowid, body) values ${sql.join(missing.map((word, i) => sql`(${i + 1}, ${word})`))}`.execute(
      db,
    );
    const rows = await sql<{ doc: number; term: string }>`select doc, term from temp.knowledge_query_stems`.execute(db);
    if (state.stems.size > MAX_REMEMBERED) state.stems.clear();
    for (const word of missing) state.stems.set(word, []);
    for (const row of rows.rows) state.stems.get(missing[Number(row.doc) - 1]!)!.push(row.term);
  }
  return state.stems;
}

/** A query word and the rows that hold its stem (a word the tokenizer splits counts each part). */
interface Term {
  word: string;
  postings: number;
}

/**
 * The query's words, rarest first by document frequency, cut at the postings budget. A stem's
 * document frequency comes from fts5vocab, which walks the stem's whole doclist to count it: for
 * the question set at 100,000 chunks ~1.4 ms a search, the largest part of a keyword search after
 * bm25. So the counts are remembered while the FTS table is unchanged (KeywordState.version).
 */
async function rarestTerms(db: Db, words: string[], state: KeywordState): Promise<Term[]> {
  const stems = await stemsOf(db, words, state);
  const remember = freshStats(state);
  const ranked: Term[] = [];
  for (const word of words) {
    for (const stem of stems.get(word)!) {
      let postings = state.postings.get(stem);
      if (postings === undefined) {
        const row = await sql<{ doc: number }>`select doc from temp.knowledge_chunks_vocab where term = ${stem}`.execute(db);
        postings = Number(row.rows[0]?.doc ?? 0);
        if (remember) state.postings.set(stem, postings);
      }
      ranked.push({ word, postings });
    }
  }
  ranked.sort((a, b) => a.postings - b.postings);
  const kept: Term[] = [];
  let spent = 0;
  for (const term of ranked) {
    if (kept.length >= 2 && spent + term.postings > state.budget) break;
    if (kept.some((other) => other.word === term.word)) continue;
    kept.push(term);
    spent += term.postings;
  }
  return kept;
}

/** The chunks of each base (the FTS table's rows, all bases together), remembered as the postings are. */
async function chunkCounts(db: Db, state: KeywordState): Promise<Map<string, number>> {
  const remember = freshStats(state);
  let chunks = remember ? state.chunks : null;
  if (chunks === null) {
    const rows = await sql<{ id: string; chunk_count: number }>`select id, chunk_count from knowledge_bases`.execute(db);
    chunks = new Map(rows.rows.map((row) => [row.id, Number(row.chunk_count)]));
    if (remember) state.chunks = chunks;
  }
  return chunks;
}

/**
 * The base's best `k` rows for an FTS5 expression by bm25, best first (score: -bm25). Asked for as
 * `bm25()` rather than FTS5's `rank` column (the same function, the same order): `ORDER BY rank`
 * took ~6 ms where `ORDER BY bm25(…)` took ~4 over the same 7,000 matching rows.
 *
 * The FTS table holds every base's chunks; a base is told apart by the `kb` column, which FTS5
 * reads from its content table row by row for every match (~0.7 µs a row: a third of a search
 * matching 7,000 rows). When the base holds half the table or more (`share`), the best matches of
 * the whole table are ranked first and the base's kept: if at least `k` of them are the base's,
 * those are its best `k` (any other of its rows ranks below all of them); otherwise (or for a
 * smaller base, or with a metadata filter) the matches are filtered by `kb` as they are ranked.
 */
async function bestRows(
  db: Db,
  baseId: string,
  match: string,
  k: number,
  filter: MetadataFilter | null,
  share: number,
): Promise<ScoredSeq[]> {
  if (!filter && share >= 0.5) {
    const wide = Math.ceil((2 * k) / share);
    const best = await sql<{ seq: number; score: number }>`
      select rowid as seq, -bm25(knowledge_chunks_fts) as score from knowledge_chunks_fts where knowledge_chunks_fts match ${match} order by score desc limit ${wide}`.execute(
      db,
    );
    const seqs = best.rows.map((row) => Number(row.seq));
    const mine =
      seqs.length === 0
        ? new Set<number>()
        : new Set(
            (
              await sql<{ seq: number }>`
      select seq from knowledge_chunks where knowledge_base_id = ${baseId} and live = 1 and seq in (${sql.join(seqs.map((seq) => sql`cast(${seq} as integer)`))})`.execute(
                db,
              )
            ).rows.map((row) => Number(row.seq)),
          );
    const kept = best.rows.filter((row) => mine.has(Number(row.seq))).map((row) => ({ seq: Number(row.seq), score: Number(row.score) }));
    if (kept.length >= k || best.rows.length < wide) return kept.slice(0, k);
  }
  const conditions = metadataConditions('sqlite', filter);
  const join =
    conditions.length > 0 ? sql`join knowledge_chunks c on c.seq = f.rowid join knowledge_documents d on d.id = c.document_id` : sql``;
  const result = await sql<{ seq: number; score: number }>`
    select f.rowid as seq, -bm25(knowledge_chunks_fts) as score from knowledge_chunks_fts f ${join}
    where knowledge_chunks_fts match ${match} and f.kb = ${baseId}${and(conditions)}
    order by score desc limit ${k}`.execute(db);
  return result.rows.map((row) => ({ seq: Number(row.seq), score: Number(row.score) }));
}

/** bm25's parameters in FTS5 (k1, and the idf floor). */
const BM25_K1 = 1.2;
const MIN_IDF = 1e-6;

/**
 * The best rows of `rare OR common` when `common` is in many rows, without scoring all of them
 * (the budget keeps two terms whatever they cost, and a second term in 17,000 of 100,000 chunks
 * made a search score ~20,000 rows). The rows holding `rare` are scored in two parts, those that
 * hold `common` too (`rare AND common`) and those that do not (`rare NOT common`): bm25 gives each
 * row the score it has in the OR (it sums over the query's phrases, and a phrase a row lacks adds
 * nothing; the phrases' frequencies are the table's either way). A row holding only `common`
 * scores less than `common`'s idf times (k1 + 1), bm25's bound for one phrase: when the k-th best
 * of the rows holding `rare` scores at least that, none of them can rank in, and these are the
 * OR's best `k`. Otherwise null (the OR is ranked whole). On the question set at 100,000 chunks
 * it is tried on 12 queries and the bound held for 10, which then ranked ~1,000-4,500 rows
 * instead of 7,000-19,580: the slowest keyword search went from ~20 to ~8 ms of CPU.
 */
async function bestOfRareTerm(
  db: Db,
  baseId: string,
  rare: Term,
  common: Term,
  k: number,
  share: number,
  rows: number,
): Promise<ScoredSeq[] | null> {
  const a = keywordQuery('sqlite', [rare.word]);
  const b = keywordQuery('sqlite', [common.word]);
  const both = await bestRows(db, baseId, `${a} AND ${b}`, k, null, share);
  const only = await bestRows(db, baseId, `${a} NOT ${b}`, k, null, share);
  const merged = [...both, ...only].sort((x, y) => y.score - x.score || x.seq - y.seq).slice(0, k);
  const idf = Math.max(MIN_IDF, Math.log((rows - common.postings + 0.5) / (common.postings + 0.5)));
  return merged.length >= k && merged[k - 1]!.score >= idf * (BM25_K1 + 1) ? merged : null;
}

export async function ftsKeyword(
  db: Db,
  baseId: string,
  allTerms: string[],
  k: number,
  filter: MetadataFilter | null,
  state: KeywordState,
): Promise<ScoredSeq[]> {
  if (allTerms.length === 0) return [];
  const terms = await rarestTerms(db, allTerms, state);
  const chunks = await chunkCounts(db, state);
  let rows = 0;
  for (const count of chunks.values()) rows += count;
  const share = rows > 0 ? (chunks.get(baseId) ?? 0) / rows : 0;
  // Tried whenever the second term is past the budget on its own: also trying it only when that
  // term is twice as common as the first (where the bound holds more often) cost more in all,
  // 140-183 against 120-126 ms of CPU for the 36 questions, as the queries it left out ranked whole.
  if (!filter && terms.length === 2 && terms[1]!.postings > state.budget) {
    const best = await bestOfRareTerm(db, baseId, terms[0]!, terms[1]!, k, share, rows);
    if (best) return best;
  }
  return bestRows(
    db,
    baseId,
    keywordQuery(
      'sqlite',
      terms.map((term) => term.word),
    ),
    k,
    filter,
    share,
  );
}
