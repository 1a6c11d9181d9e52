import type { KnowledgeChunkRow } from '../store/knowledge-chunk-repository.js';

/**
 * Staged chunks an ingest has just committed, handed to the embedding loop of the same process,
 * which would otherwise read them back from the database at once: on the ingest benchmark that
 * read (every staged row with its text, through the query builder: ~24 ms of SQLite and ~17 ms
 * of building and compiling for 420 documents) was ~2% of the server's CPU time.
 *
 * Only committed rows are handed over (the ingest puts them after its commit), one version per
 * document, and a version's staged rows never change once committed, so an entry is the
 * database's rows whenever it is taken. A taken entry is gone; a document claimed again (a
 * retry, a restart, another process) reads its rows from the database as before. A newer
 * version replaces the entry of an older one. Bounded: the oldest entries make room, and a
 * document of more chunks than the bound is not handed over.
 */
export class StagedHandoff {
  private readonly entries = new Map<string, { version: number; rows: KnowledgeChunkRow[] }>();
  private held = 0;

  constructor(private maxChunks = 8192) {}

  /** Hands `rows` over: the caller no longer uses them (the loop sets their vectors). */
  put(documentId: string, version: number, rows: KnowledgeChunkRow[]): void {
    this.drop(documentId);
    if (rows.length > this.maxChunks) return;
    for (const [oldest, entry] of this.entries) {
      if (this.held + rows.length <= this.maxChunks) break;
      this.entries.delete(oldest);
      this.held -= entry.rows.length;
    }
    this.entries.set(documentId, { version, rows });
    this.held += rows.length;
  }

  /** The rows handed over for this version, once; undefined when there are none. */
  take(documentId: string, version: number): KnowledgeChunkRow[] | undefined {
    const entry = this.entries.get(documentId);
    if (entry === undefined || entry.version > version) return undefined;
    this.drop(documentId);
    return entry.version === version ? entry.rows : undefined;
  }

  /** A deleted document's entry goes. */
  forget(documentId: string): void {
    this.drop(documentId);
  }

  /** Holds nothing from now on: this process runs no embedding loop (`serve --role api`). */
  disable(): void {
    this.maxChunks = 0;
    this.entries.clear();
    this.held = 0;
  }

  /** Chunks held. */
  get size(): number {
    return this.held;
  }

  private drop(documentId: string): void {
    const entry = this.entries.get(documentId);
    if (entry === undefined) return;
    this.entries.delete(documentId);
    this.held -= entry.rows.length;
  }
}
