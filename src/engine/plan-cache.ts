import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Graph } from '../graph/graph-types.js';
import { FreshCache } from '../lib/fresh-cache.js';
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
}
