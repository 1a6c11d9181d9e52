import type { Kysely } from 'kysely';
import type { SqlDialect } from '../db/dialect/dialect.js';
import type { AppProvider, Database } from '../db/schema.js';
import { EngineBusyError, type Engine, type ExecutionObserver, type StartRun } from '../engine/engine.js';
import { AppError } from '../errors/app-error.js';
import type { Clock } from '../lib/clock.js';
import { findPlatformEvents, insertPlatformEvents } from '../store/platform-event-repository.js';
import type { LiveTrigger } from './platform-triggers.js';

export interface PlatformStartContext {
  db: Kysely<Database>;
  dialect: SqlDialect;
  engine: Engine;
  clock: Clock;
}

export interface PlatformStart {
  provider: AppProvider;
  workspaceId: string;
  /** The delivery's own id (Slack's event_id, Twilio's MessageSid, …): a redelivery carries it again. */
  eventKey: string;
  /**
   * One workflow starts at most once per this key (for instance a Slack message delivered both
   * as `message` and as `app_mention`, two event ids): recorded per workflow beside the event key.
   */
  workflowKey?: string;
  /** The trigger nodes that match the delivery; several in one workflow fire in one execution. */
  triggers: LiveTrigger[];
  /** The trigger output every started workflow gets. */
  trigger: unknown;
  /** A caller waiting for the runs' answers (an SMS answered by a respond step): one observer per execution. */
  observe?: () => ExecutionObserver;
}

export type PlatformStartResult =
  | { outcome: 'started'; executionIds: string[] }
  /** The event key was recorded before: a redelivery or a concurrent copy. Nothing started. */
  | { outcome: 'duplicate' }
  /** No trigger matched (or every matching workflow already ran for the workflow key). */
  | { outcome: 'no_match' };

/** Rounds of a race between deliveries of one message under different event ids. */
const MAX_ATTEMPTS = 4;

/**
 * Starts one execution per workflow with a matching trigger, and records the event's dedupe key
 * (and per-workflow keys) in the SAME commit (Engine.runMany): either the executions and the key
 * exist afterwards or neither does. Of two copies of one event, whichever commits second fails
 * on the key's primary key, starts nothing, and reports `duplicate`; the provider gets a 200 for
 * both. A per-workflow key that is already taken (the other delivery of the same message won for
 * that workflow) drops that workflow only: the start is retried without it.
 */
export async function startPlatformRuns(ctx: PlatformStartContext, start: PlatformStart): Promise<PlatformStartResult> {
  const byWorkflow = new Map<string, { snapshotId: string; nodeIds: string[] }>();
  for (const trigger of start.triggers) {
    const entry = byWorkflow.get(trigger.workflowId);
    if (entry) entry.nodeIds.push(trigger.nodeId);
    else byWorkflow.set(trigger.workflowId, { snapshotId: trigger.snapshotId, nodeIds: [trigger.nodeId] });
  }
  if (byWorkflow.size === 0) return { outcome: 'no_match' };
  const eventKey = `event:${start.eventKey}`;
  const workflowKey = (workflowId: string) => `workflow:${start.workflowKey}:${workflowId}`;

  for (let attempt = 1; ; attempt += 1) {
    const keys = [eventKey, ...(start.workflowKey === undefined ? [] : [...byWorkflow.keys()].map(workflowKey))];
    const seen = await findPlatformEvents(ctx.db, start.provider, keys);
    if (seen.has(eventKey)) return { outcome: 'duplicate' };
    const workflows = [...byWorkflow.entries()].filter(([id]) => start.workflowKey === undefined || !seen.has(workflowKey(id)));
    if (workflows.length === 0) return { outcome: 'no_match' };
    const starts: StartRun[] = workflows.map(([workflowId, entry]) => ({
      workspaceId: start.workspaceId,
      workflowId,
      snapshotId: entry.snapshotId,
      userId: null,
      trigger: start.trigger,
      firedRoots: entry.nodeIds,
      ...(start.observe ? { observer: start.observe() } : {}),
    }));
    const now = ctx.clock.now();
    const rows = [eventKey, ...(start.workflowKey === undefined ? [] : workflows.map(([id]) => workflowKey(id)))].map(
      (dedupe_key, index) => ({
        provider: start.provider,
        dedupe_key,
        workspace_id: start.workspaceId,
        execution_count: index === 0 ? starts.length : 1,
        created_at: now,
      }),
    );
    try {
      const started = await ctx.engine.runMany(starts, (trx) => insertPlatformEvents(trx, rows));
      return { outcome: 'started', executionIds: started.map((s) => s.execution_id) };
    } catch (error) {
      if (error instanceof EngineBusyError)
        throw new AppError('service_unavailable', 'the workflow engine is at capacity; retry later', undefined, {
          headers: { 'retry-after': '1' },
        });
      if (!ctx.dialect.isUniqueViolation(error) || attempt >= MAX_ATTEMPTS) throw error;
      // Lost a race: the next round finds the winner's keys.
    }
  }
}
