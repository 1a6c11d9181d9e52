import type { Kysely } from 'kysely';
import type { Database, ExecutionStatus } from '../../db/schema.js';
import { EngineBusyError, type Engine } from '../../engine/engine.js';
import { findExecutionInWorkspace } from '../../engine/execution-store.js';
import type { Actor } from '../workflows/workflow-service.js';

export type BulkAction = 'cancel' | 'retry';

/**
 * The statuses each bulk action applies to: cancel stops what has not ended, retry starts again
 * what failed or was cancelled (each as a new execution linked to it, as the single retry does).
 */
export const BULK_STATUSES: Record<BulkAction, readonly ExecutionStatus[]> = {
  cancel: ['pending', 'running', 'waiting'],
  retry: ['failed', 'cancelled'],
};

/** Executions one bulk call acts on: the rest is `remaining`, for the next call. */
export const MAX_BULK_EXECUTIONS = 1000;

/** Cancels this many at once: their commits share the engine's write batches. */
const CANCEL_GROUP = 50;

/**
 * Cancels or retries the executions `ids` (already chosen in the actor's workspace by the
 * caller's filter), each looked up again in the workspace first (fail closed). Returns how many
 * it acted on: an execution that ended (cancel) or was retried (retry) meanwhile is skipped, and
 * a retry stops early when the engine has no room (the rest stays matched for the next call).
 */
export async function actOnExecutions(db: Kysely<Database>, engine: Engine, actor: Actor, action: BulkAction, ids: readonly string[]) {
  let acted = 0;
  if (action === 'cancel') {
    for (let start = 0; start < ids.length; start += CANCEL_GROUP) {
      const results = await Promise.all(
        ids.slice(start, start + CANCEL_GROUP).map(async (id) => {
          const execution = await findExecutionInWorkspace(db, actor.workspaceId, id);
          return execution ? (await engine.cancel(execution)).cancelled : false;
        }),
      );
      acted += results.filter(Boolean).length;
    }
    return acted;
  }
  for (const id of ids) {
    const execution = await findExecutionInWorkspace(db, actor.workspaceId, id);
    if (!execution || !BULK_STATUSES.retry.includes(execution.status)) continue;
    try {
      await engine.retry(execution, actor.userId);
    } catch (error) {
      if (error instanceof EngineBusyError) break;
      throw error;
    }
    acted++;
  }
  return acted;
}
