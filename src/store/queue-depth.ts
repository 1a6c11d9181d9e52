import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** The statuses of executions in the queue: ready or delayed, waiting for a time, or running. */
export const QUEUE_STATUSES = ['pending', 'waiting', 'running'] as const;
export type QueueStatus = (typeof QUEUE_STATUSES)[number];

/**
 * Executions in the queue by status, for the metrics scrape. Each half is served by a partial
 * index of migration 0005, so its cost follows the queue's size, not the table's: `run_at` is set
 * exactly while an execution is pending or waits for a time (`executions_due_idx`), and
 * `executions_running_idx` holds the running ones. A parent waiting for a child it called has no
 * `run_at`: it is not work to run (its child is) and is not counted.
 */
export async function countQueue(db: Kysely<Database>): Promise<Record<QueueStatus, number>> {
  const { rows } = await sql<{ status: string; n: number | string }>`
    select status, count(*) as n from executions where run_at is not null group by status
    union all
    select 'running' as status, count(*) as n from executions where status = 'running' and run_at is null
  `.execute(db);
  const depth: Record<QueueStatus, number> = { pending: 0, waiting: 0, running: 0 };
  for (const row of rows) if ((QUEUE_STATUSES as readonly string[]).includes(row.status)) depth[row.status as QueueStatus] += Number(row.n);
  return depth;
}
