import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DialectName } from '../db/dialect/dialect.js';
import type { Database } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import { addMs } from '../lib/clock.js';
import type { BackgroundTask } from '../lib/background-loop.js';
import { newId } from '../lib/ids.js';
import { toStorableText } from '../lib/storable-text.js';
import { chat } from '../ai/chat-client.js';
import { ConnectionResolver } from '../ai/connection-resolver.js';
import { ProviderError } from '../ai/provider-error.js';
import { countTokens } from '../knowledge/token-counter.js';
import { claimDue, releaseLeases } from '../store/lease-claims.js';
import { MemoryRepository, type MemorySessionRow } from '../store/memory-repository.js';
import { failure, retryDelay, DEFAULT_MAX_ATTEMPTS } from '../knowledge/embedding-jobs.js';
import { settingsOf } from './memory-settings.js';
import { lockSession } from './session-lock.js';
import { recordCompaction } from './session-messages.js';

export const SUMMARY_SYSTEM_PROMPT =
  'You maintain the memory of a conversation. Write a concise summary of the conversation below, keeping every fact, decision, name, number and open question a later reply may need. Write the summary only, in the language of the conversation.';

/**
 * Summarize compactions, run by the background loop after the append that crossed the
 * threshold committed. The older messages of the window (all but the newest ones that fit in
 * half the threshold, at least one) are folded, with the previous summary, into one new
 * `summary` message; they leave the window (stored still, recall can find them). Provider
 * failures are retried like embeddings; when the model fails for good the session is truncated
 * instead and the error recorded, so it never grows without bound.
 */
export function createCompactionJobs(options: {
  db: Kysely<Database>;
  dialect: DialectName;
  clock: Clock;
  secretKey: string;
  httpAllow: readonly string[];
  owner?: string;
  leaseMs?: number;
  maxAttempts?: number;
}): BackgroundTask[] {
  const owner = options.owner ?? randomUUID();
  const { db, clock } = options;
  const resolver = new ConnectionResolver(db, options.secretKey);
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;

  async function compact(session: MemorySessionRow): Promise<void> {
    const repo = new MemoryRepository(db, session.workspace_id);
    const memory = await repo.find(session.memory_id);
    if (!memory) return;
    const settings = settingsOf(memory);
    const window = await repo.windowMessages(session.id);
    const previous = window.filter((m) => m.role === 'summary');
    const verbatim = window.filter((m) => m.role !== 'summary');
    let keep = 0;
    for (
      let budget = settings.compaction.threshold_tokens / 2, i = verbatim.length - 1;
      i >= 0 && (keep === 0 || verbatim[i]!.tokens <= budget);
      i--
    ) {
      budget -= verbatim[i]!.tokens;
      keep += 1;
    }
    const folded = verbatim.slice(0, verbatim.length - keep);
    const tokensBefore = window.reduce((sum, m) => sum + m.tokens, 0);
    const now = clock.now();
    const done = async (changes: Partial<MemorySessionRow>) =>
      repo.updateSession(session.id, {
        compaction_due: false,
        attempts: 0,
        next_attempt_at: null,
        lease_owner: null,
        lease_expires_at: null,
        updated_at: now,
        ...changes,
      });
    if (folded.length === 0 || settings.compaction.mode !== 'summarize') {
      await done({});
      return;
    }
    let summary: string;
    try {
      if (!settings.compaction.connection_id || !settings.compaction.model)
        throw new ProviderError('rejected', 'summarize compaction needs compaction.connection_id and compaction.model');
      const connection = await resolver.resolve(session.workspace_id, settings.compaction.connection_id);
      const transcript = [
        ...(previous.length > 0 ? [`Summary so far:\n${previous.at(-1)!.content}`] : []),
        ...folded.map((m) => `${m.role}: ${m.content}`),
      ].join('\n\n');
      const answer = await chat(
        connection,
        { model: settings.compaction.model, system: SUMMARY_SYSTEM_PROMPT, messages: [{ role: 'user', content: transcript }] },
        { httpAllow: options.httpAllow, nowMs: () => clock.nowMs() },
      );
      summary = toStorableText(answer.text).trim();
      if (summary === '') throw new ProviderError('malformed', 'the model answered an empty summary');
    } catch (error) {
      const attempts = session.attempts + 1;
      if (error instanceof ProviderError && error.retryable && attempts < maxAttempts) {
        await repo.updateSession(session.id, {
          attempts,
          next_attempt_at: addMs(now, retryDelay(error, attempts)),
          compaction_error: JSON.stringify(failure(error)),
          lease_owner: null,
          lease_expires_at: null,
        });
        return;
      }
      // The model failed for good: truncate instead, so the window is bounded anyway. Appends
      // may have committed meanwhile: the window is read again under the session's lock.
      await db.transaction().execute(async (trx) => {
        const scoped = repo.withTransaction(trx);
        const current = await lockSession(trx, session.workspace_id, session.id);
        if (!current || current.lease_owner !== owner) return;
        const window = await scoped.windowMessages(session.id);
        const before = window.reduce((sum, m) => sum + m.tokens, 0);
        const foldable = new Set(folded.map((m) => m.id));
        let tokens = before;
        const leaving: string[] = [];
        for (const message of window) {
          if (tokens <= settings.compaction.threshold_tokens) break;
          if (!foldable.has(message.id)) continue;
          leaving.push(message.id);
          tokens -= message.tokens;
        }
        await scoped.leaveWindow(leaving);
        await scoped.updateSession(session.id, {
          compaction_due: false,
          attempts: 0,
          next_attempt_at: null,
          lease_owner: null,
          lease_expires_at: null,
          updated_at: now,
          window_tokens: tokens,
          compaction_error: JSON.stringify(failure(error)),
          ...recordCompaction(current, {
            mode: 'truncate',
            messages: leaving.length,
            tokens_before: before,
            tokens_after: tokens,
            at: now,
            error: failure(error),
          }),
        });
      });
      return;
    }
    // The summary takes the next position under the session's lock (session-lock.ts): appends
    // committed while the model wrote it are counted, and those still running wait for it.
    await db.transaction().execute(async (trx) => {
      const scoped = repo.withTransaction(trx);
      const current = await lockSession(trx, session.workspace_id, session.id);
      if (!current || current.lease_owner !== owner) return;
      const summaryTokens = countTokens(summary);
      await scoped.leaveWindow([...previous, ...folded].map((m) => m.id));
      await scoped.insertMessages([
        {
          id: newId(),
          workspace_id: session.workspace_id,
          memory_id: session.memory_id,
          session_id: session.id,
          position: current.message_count + 1,
          role: 'summary',
          content: summary,
          tokens: summaryTokens,
          in_window: true,
          embedding: null,
          created_at: now,
        },
      ]);
      const remaining = await scoped.windowMessages(session.id);
      const tokensAfter = remaining.reduce((sum, m) => sum + m.tokens, 0);
      await scoped.updateSession(session.id, {
        message_count: current.message_count + 1,
        window_tokens: tokensAfter,
        // Appends while the model wrote may have crossed the threshold again: due once more.
        compaction_due: tokensAfter > settings.compaction.threshold_tokens,
        attempts: 0,
        next_attempt_at: null,
        lease_owner: null,
        lease_expires_at: null,
        compaction_error: null,
        updated_at: now,
        ...recordCompaction(current, {
          mode: 'summarize',
          messages: folded.length,
          tokens_before: tokensBefore,
          tokens_after: tokensAfter,
          at: now,
        }),
      });
    });
  }

  return [
    {
      name: 'compact memories',
      batch: 8,
      run: async (signal) => {
        const now = clock.now();
        const claimed = await claimDue(db, 'memory_sessions', 'compaction', {
          dialect: options.dialect,
          owner,
          now,
          leaseUntil: addMs(now, options.leaseMs ?? 60_000),
          limit: 8,
        });
        for (const session of claimed) {
          if (signal.aborted) break;
          await compact(session);
        }
        return claimed.length;
      },
      release: () => releaseLeases(db, 'memory_sessions', owner),
    },
  ];
}
