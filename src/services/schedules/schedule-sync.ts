import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Graph } from '../../graph/graph-types.js';
import { formatMicros, parseTimestampMicros } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { DEFAULT_TIMEZONE, nextFireAfter, type ScheduleCatchUp, type ScheduleTiming } from '../../steps/schedule/schedule-times.js';
import {
  deleteWorkflowSchedules,
  insertSchedule,
  listWorkflowSchedules,
  updateSchedule,
  type ScheduleRow,
} from '../../store/schedule-repository.js';

export interface ScheduleSyncContext {
  trx: Transaction<Database>;
  workspaceId: string;
  workflowId: string;
  now: string;
}

type TimingColumns = Pick<ScheduleRow, 'cron' | 'timezone' | 'catch_up'> & { interval_ms: number | null };

/** The timing columns of a schedule node's config (validated on save: exactly one of cron and interval_ms). */
function timingColumns(config: Record<string, unknown>): TimingColumns {
  const catchUp = (config.catch_up === 'run_once' ? 'run_once' : 'skip') satisfies ScheduleCatchUp;
  if (typeof config.cron === 'string') {
    return {
      cron: config.cron,
      timezone: typeof config.timezone === 'string' ? config.timezone : DEFAULT_TIMEZONE,
      interval_ms: null,
      catch_up: catchUp,
    };
  }
  return { cron: null, timezone: null, interval_ms: Number(config.interval_ms), catch_up: catchUp };
}

/** A row's interval in milliseconds (PostgreSQL reads the bigint column as a string), or null for a cron. */
export function rowIntervalMs(row: Pick<ScheduleRow, 'interval_ms'>): number | null {
  return row.interval_ms === null ? null : Number(row.interval_ms);
}

export function rowTiming(row: Pick<ScheduleRow, 'cron' | 'timezone' | 'interval_ms'>): ScheduleTiming {
  return row.cron !== null ? { cron: row.cron, timezone: row.timezone ?? DEFAULT_TIMEZONE } : { intervalMs: rowIntervalMs(row) ?? 60_000 };
}

export function timestampMs(value: string): number {
  return Math.floor((parseTimestampMicros(value) ?? 0) / 1000);
}

export function msTimestamp(ms: number): string {
  return formatMicros(ms * 1000);
}

/**
 * Activation: one `schedules` row per enabled schedule node of the snapshot now active. A node
 * whose timing is unchanged keeps its next fire time (re-publishing a workflow neither fires
 * early nor drops the coming fire); a new or changed node starts counting now; rows of removed
 * or disabled nodes go (a disabled trigger starts nothing, as the platform triggers skip theirs).
 * Runs in the activation's transaction, so the snapshot and its schedules commit together.
 */
export async function activateSchedules(ctx: ScheduleSyncContext, snapshotId: string, graph: Graph): Promise<number> {
  const existing = new Map((await listWorkflowSchedules(ctx.trx, ctx.workspaceId, ctx.workflowId)).map((row) => [row.node_id, row]));
  const nowMs = timestampMs(ctx.now);
  const kept: string[] = [];
  for (const node of graph.nodes) {
    if (node.type !== 'schedule' || node.disabled) continue;
    const timing = timingColumns(node.config);
    const current = existing.get(node.id);
    const same =
      current && current.cron === timing.cron && current.timezone === timing.timezone && rowIntervalMs(current) === timing.interval_ms;
    if (current && same) {
      kept.push(current.id);
      await updateSchedule(ctx.trx, current.id, { snapshot_id: snapshotId, catch_up: timing.catch_up, updated_at: ctx.now });
      continue;
    }
    const next = nextFireAfter(rowTiming(timing), nowMs, nowMs);
    // A pattern with no future date was refused on save; one whose dates have all passed fires never.
    if (next === null) continue;
    const fields = {
      ...timing,
      snapshot_id: snapshotId,
      anchor_at: ctx.now,
      next_fire_at: msTimestamp(next),
      last_fired_at: null,
      updated_at: ctx.now,
    };
    if (current) {
      kept.push(current.id);
      await updateSchedule(ctx.trx, current.id, fields);
    } else {
      const id = newId();
      kept.push(id);
      await insertSchedule(ctx.trx, {
        id,
        workspace_id: ctx.workspaceId,
        workflow_id: ctx.workflowId,
        node_id: node.id,
        created_at: ctx.now,
        ...fields,
      });
    }
  }
  await deleteWorkflowSchedules(ctx.trx, ctx.workspaceId, ctx.workflowId, kept);
  return kept.length;
}

/** Deactivation: the workflow's schedules stop (deletion cascades from the workflow row). */
export async function deactivateSchedules(ctx: ScheduleSyncContext): Promise<void> {
  await deleteWorkflowSchedules(ctx.trx, ctx.workspaceId, ctx.workflowId);
}
