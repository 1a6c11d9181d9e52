import type { Transaction } from 'kysely';
import type { Database, MessageRole } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { toStorableText } from '../lib/storable-text.js';
import { builtinEmbed } from '../ai/builtin-embedder.js';
import { countTokens } from '../knowledge/token-counter.js';
import { MemoryRepository, type MemoryMessageRow, type MemoryRow, type MemorySessionRow } from '../store/memory-repository.js';
import { toVectorBytes } from '../store/stored-vector.js';
import { settingsOf } from './memory-settings.js';
import { openSession } from './session-lock.js';

export interface NewMessage {
  role: MessageRole;
  content: string;
}

export interface AppendResult {
  session: MemorySessionRow;
  messages: MemoryMessageRow[];
  /** A summarize compaction became due: the caller pokes the background loop after commit. */
  compactionDue: boolean;
}

/** The messages of a window that may leave it, oldest first: everything but the summary. */
function verbatim(window: MemoryMessageRow[]): MemoryMessageRow[] {
  return window.filter((message) => message.role !== 'summary');
}

/**
 * Appends messages to a session inside the caller's transaction (the agent step appends in the
 * commit that completes the step), creating the session on its first message. Then it keeps
 * the session bounded, in the same transaction:
 * - the window holds at most `window` verbatim messages; older ones leave it (stored still);
 * - past `threshold_tokens`, `truncate` moves the oldest out until the window fits (the newest
 *   message always stays) and records the compaction; `summarize` marks the session for the
 *   background loop, which needs a model call and so runs after the commit.
 */
export async function appendMessages(
  trx: Transaction<Database>,
  clock: Clock,
  memory: MemoryRow,
  sessionKey: string,
  messages: NewMessage[],
): Promise<AppendResult> {
  const repo = new MemoryRepository(trx, memory.workspace_id);
  const settings = settingsOf(memory);
  const now = clock.now();
  // The session is locked until the commit (session-lock.ts): appends, compactions and clears
  // of one session take turns, in this process and across processes, so positions never collide.
  const session = await openSession(trx, {
    id: newId(),
    workspace_id: memory.workspace_id,
    memory_id: memory.id,
    session_key: sessionKey,
    message_count: 0,
    window_tokens: 0,
    compaction_count: 0,
    last_compacted_at: null,
    last_compaction: null,
    compaction_due: false,
    lease_owner: null,
    lease_expires_at: null,
    next_attempt_at: null,
    attempts: 0,
    compaction_error: null,
    created_at: now,
    updated_at: now,
  });
  const rows: MemoryMessageRow[] = messages.map((message, i) => {
    // A chat message or a model's answer with a NUL in it must not fail the step that keeps it.
    const content = toStorableText(message.content);
    return {
      id: newId(),
      workspace_id: memory.workspace_id,
      memory_id: memory.id,
      session_id: session.id,
      position: session.message_count + i + 1,
      role: message.role,
      content,
      tokens: countTokens(content),
      in_window: true,
      embedding: message.role === 'summary' ? null : toVectorBytes(builtinEmbed(content)),
      created_at: now,
    };
  });
  await repo.insertMessages(rows);

  let window = await repo.windowMessages(session.id);
  const leaving: string[] = [];
  const kept = verbatim(window);
  if (kept.length > settings.window) leaving.push(...kept.slice(0, kept.length - settings.window).map((m) => m.id));
  window = window.filter((m) => !leaving.includes(m.id));
  let tokens = window.reduce((sum, m) => sum + m.tokens, 0);
  const changes: Partial<MemorySessionRow> = { message_count: session.message_count + rows.length, updated_at: now };
  let compactionDue = false;
  const threshold = settings.compaction.threshold_tokens;
  if (settings.compaction.mode !== 'none' && tokens > threshold) {
    if (settings.compaction.mode === 'truncate') {
      const before = tokens;
      const candidates = verbatim(window).slice(0, -1);
      let moved = 0;
      for (const message of candidates) {
        if (tokens <= threshold) break;
        leaving.push(message.id);
        tokens -= message.tokens;
        moved += 1;
      }
      Object.assign(
        changes,
        recordCompaction(session, { mode: 'truncate', messages: moved, tokens_before: before, tokens_after: tokens, at: now }),
      );
    } else {
      compactionDue = true;
      Object.assign(changes, { compaction_due: true, next_attempt_at: null, attempts: 0 });
    }
  }
  await repo.leaveWindow(leaving);
  changes.window_tokens = tokens;
  await repo.updateSession(session.id, changes);
  return {
    session: { ...session, ...changes },
    messages: rows.map((row) => ({ ...row, in_window: !leaving.includes(row.id) })),
    compactionDue,
  };
}

export interface CompactionRecord {
  mode: 'truncate' | 'summarize';
  messages: number;
  tokens_before: number;
  tokens_after: number;
  at: string;
  /** Set when a summarize compaction fell back to truncating (the model failed for good). */
  error?: { code: string; message: string };
}

export function recordCompaction(session: MemorySessionRow, record: CompactionRecord): Partial<MemorySessionRow> {
  return { compaction_count: session.compaction_count + 1, last_compacted_at: record.at, last_compaction: JSON.stringify(record) };
}
