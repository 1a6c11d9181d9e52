import type { Kysely, Transaction } from 'kysely';
import type { Database, MessageRole } from '../db/schema.js';
import { builtinEmbed } from '../ai/builtin-embedder.js';
import { MemoryRepository, type MemoryRow } from '../store/memory-repository.js';
import { fromStoredVector } from '../store/stored-vector.js';
import { settingsOf } from './memory-settings.js';

export interface ContextMessage {
  role: MessageRole;
  content: string;
  created_at: string;
}

export interface RecalledMessage extends ContextMessage {
  /** Cosine similarity to the query (built-in embedder). */
  score: number;
}

/** What goes into a prompt from a session: its summary, the window, and recalled older messages. */
export interface PromptContext {
  summary: string | null;
  messages: ContextMessage[];
  recalled: RecalledMessage[];
  /** Tokens of summary and window together. */
  tokens: number;
}

/**
 * "The prompt context of session S": the latest summary, the messages of the window in order,
 * and, with semantic recall and a query, the `top_k` messages outside the window most similar
 * to it (best first; only positive similarity). A window still over the threshold (its
 * summarize compaction has not run yet) is cut from the oldest end here, so no prompt ever
 * carries more than the threshold. An unknown session has an empty context.
 */
export async function promptContext(
  db: Kysely<Database> | Transaction<Database>,
  memory: MemoryRow,
  sessionKey: string,
  query?: string,
): Promise<PromptContext> {
  const repo = new MemoryRepository(db, memory.workspace_id);
  const settings = settingsOf(memory);
  const session = await repo.findSession(memory.id, sessionKey);
  if (!session) return { summary: null, messages: [], recalled: [], tokens: 0 };
  const window = await repo.windowMessages(session.id);
  const summaries = window.filter((m) => m.role === 'summary');
  const summary = summaries.at(-1) ?? null;
  let verbatim = window.filter((m) => m.role !== 'summary');
  let tokens = (summary?.tokens ?? 0) + verbatim.reduce((sum, m) => sum + m.tokens, 0);
  if (settings.compaction.mode !== 'none') {
    while (tokens > settings.compaction.threshold_tokens && verbatim.length > 1) {
      tokens -= verbatim[0]!.tokens;
      verbatim = verbatim.slice(1);
    }
  }
  let recalled: RecalledMessage[] = [];
  if (settings.recall.mode === 'semantic' && query && query.trim() !== '') {
    const target = builtinEmbed(query);
    recalled = (await repo.outOfWindow(session.id))
      .map((message) => {
        const vector = fromStoredVector(message.embedding);
        let score = 0;
        if (vector) for (let i = 0; i < vector.length; i++) score += vector[i]! * target[i]!;
        return { role: message.role, content: message.content, created_at: message.created_at, score };
      })
      .filter((message) => message.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, settings.recall.top_k);
  }
  return {
    summary: summary?.content ?? null,
    messages: verbatim.map((m) => ({ role: m.role, content: m.content, created_at: m.created_at })),
    recalled,
    tokens,
  };
}
