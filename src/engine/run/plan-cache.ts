import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Graph } from '../../graph/graph-types.js';
import { FreshCache } from '../../lib/fresh-cache.js';
import { planGraph, type GraphPlan } from './graph-plan.js';

/**
 * Plans by snapshot id. Snapshots never change, so a plan never goes stale, and the graph is
 * read (and parsed) only on a miss: not on every run of an active workflow.
 */
export class PlanCache {
  private readonly plans = new FreshCache<GraphPlan>(500);

  constructor(private readonly db: Kysely<Database>) {}

  /** `graph`: the snapshot's graph when the caller has it in hand (a draft run). */
  async load(snapshotId: string, graph?: Graph): Promise<GraphPlan> {
    const cached = this.plans.get(snapshotId, '');
    if (cached) return cached;
    let source = graph;
    if (!source) {
      const snapshot = await this.db.selectFrom('workflow_snapshots').select('graph').where('id', '=', snapshotId).executeTakeFirst();
      if (!snapshot) throw new Error(`snapshot ${snapshotId} is missing`);
      source = JSON.parse(snapshot.graph) as Graph;
    }
    const plan = planGraph(source);
    this.plans.set(snapshotId, '', plan);
    return plan;
  }

  /**
   * Plans of many snapshots with one read per 500 misses (a scheduler firing 500 workflows at
   * once: 500 single-row reads cost more than the commit that fires them). Snapshots that do
   * not exist are absent from the result.
   */
  async loadMany(snapshotIds: Iterable<string>): Promise<Map<string, GraphPlan>> {
    const found = new Map<string, GraphPlan>();
    const missing: string[] = [];
    for (const id of new Set(snapshotIds)) {
      const cached = this.plans.get(id, '');
      if (cached) found.set(id, cached);
      else missing.push(id);
    }
    for (let i = 0; i < missing.length; i += 500) {
      const rows = await this.db
        .selectFrom('workflow_snapshots')
        .select(['id', 'graph'])
        .where('id', 'in', missing.slice(i, i + 500))
        .execute();
      for (const row of rows) {
        const plan = planGraph(JSON.parse(row.graph) as Graph);
        this.plans.set(row.id, '', plan);
        found.set(row.id, plan);
      }
    }
    return found;
  }
}
