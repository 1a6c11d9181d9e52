/**
 * Concurrency accounting of one engine: an engine-wide limit and optional per-workflow limits
 * (the graph's `settings.concurrency_limit`). A slot is taken before an execution's first
 * commit is awaited, so concurrent admissions cannot overbook, and given back when its run in
 * this process ends (finished, waiting, or cancelled).
 */
export class RunSlots {
  private used = 0;
  private readonly perWorkflow = new Map<string, { used: number; limit: number | null }>();

  constructor(private readonly max: number) {}

  /** Engine-wide slots in all. */
  get size(): number {
    return this.max;
  }

  /** Free engine-wide slots. */
  free(): number {
    return this.max - this.used;
  }

  canStart(workflowId: string, limit: number | null): boolean {
    if (this.used >= this.max) return false;
    return limit === null || (this.perWorkflow.get(workflowId)?.used ?? 0) < limit;
  }

  take(workflowId: string, limit: number | null): void {
    this.used += 1;
    const entry = this.perWorkflow.get(workflowId);
    if (entry) {
      entry.used += 1;
      entry.limit = limit;
    } else {
      this.perWorkflow.set(workflowId, { used: 1, limit });
    }
  }

  release(workflowId: string): void {
    this.used -= 1;
    const entry = this.perWorkflow.get(workflowId);
    if (!entry) return;
    entry.used -= 1;
    if (entry.used === 0) this.perWorkflow.delete(workflowId);
  }

  /** Workflows at their own limit: their pending executions are not due yet, whatever their age. */
  blockedWorkflows(): string[] {
    const blocked: string[] = [];
    for (const [id, entry] of this.perWorkflow) if (entry.limit !== null && entry.used >= entry.limit) blocked.push(id);
    return blocked;
  }
}
