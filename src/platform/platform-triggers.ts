import { sql, type Kysely } from 'kysely';
import type { DataStamp } from '../db/data-stamp.js';
import type { Database } from '../db/schema.js';
import type { GraphPlan } from '../engine/engine.js';
import { FreshCache } from '../lib/fresh-cache.js';

/** A live trigger node of an active workflow: what a platform delivery is matched against. */
export interface LiveTrigger {
  workflowId: string;
  snapshotId: string;
  nodeId: string;
  config: Readonly<Record<string, unknown>>;
}

const TABLES = ['workflows'] as const;

/**
 * The trigger nodes of one type in a workspace's active workflows, read from the activated
 * snapshots (a node added to the canvas later is not live until the next activation). Cached per
 * workspace and type while no workflow row changed: activation and deactivation write the
 * workflow row, so the next delivery sees them (db/data-stamp.ts).
 */
export class PlatformTriggers {
  private readonly cache = new FreshCache<LiveTrigger[]>(10_000);

  constructor(
    private readonly db: Kysely<Database>,
    private readonly planOf: (snapshotId: string) => Promise<GraphPlan>,
    private readonly stamp: DataStamp | null,
  ) {}

  async list(workspaceId: string, slug: string): Promise<LiveTrigger[]> {
    let stamp = this.stamp?.(TABLES) ?? null;
    if (typeof stamp === 'object' && stamp !== null) stamp = await stamp;
    const key = `${workspaceId}\0${slug}`;
    if (stamp !== null) {
      const cached = this.cache.get(key, stamp);
      if (cached !== undefined) return cached;
    }
    const rows = await this.db
      .selectFrom('workflows')
      .innerJoin('workflow_snapshots', 'workflow_snapshots.id', 'workflows.active_snapshot_id')
      .select(['workflows.id as workflow_id', 'workflows.active_snapshot_id as snapshot_id'])
      .where('workflows.workspace_id', '=', workspaceId)
      .where('workflows.status', '=', 'active')
      // A cheap prefilter on the stored JSON; the plan below decides.
      .where('workflow_snapshots.graph', 'like', sql<string>`${`%${slug}%`}`)
      .orderBy('workflows.created_at')
      .orderBy('workflows.id')
      .execute();
    const triggers: LiveTrigger[] = [];
    for (const row of rows) {
      const plan = await this.planOf(row.snapshot_id!);
      for (const nodeId of plan.roots) {
        const node = plan.nodes.get(nodeId)!;
        if (node.type === slug && !node.disabled)
          triggers.push({ workflowId: row.workflow_id, snapshotId: row.snapshot_id!, nodeId, config: node.config });
      }
    }
    if (stamp !== null) this.cache.set(key, stamp, triggers);
    return triggers;
  }
}
