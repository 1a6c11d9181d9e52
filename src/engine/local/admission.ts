/**
 * Admission control: past this many queued executions, new top-level runs wait for room before
 * they are created. Without it a flood of deliveries is all admitted (each costing a commit) and
 * starves the runs themselves: in the first webhook benchmark 2,200 deliveries/s were accepted
 * while 166 executions/s completed, leaving a backlog of 14,000. Waiting pushes back on senders
 * through answer latency instead; a caller that cannot wait gives up after its timeout.
 */
export const ADMISSION_QUEUE_LIMIT = 256;

/** A run could not be admitted before its caller gave up (the engine is at capacity). */
export class EngineBusyError extends Error {
  constructor() {
    super('the engine is at capacity: no room for a new execution in time');
    this.name = 'EngineBusyError';
  }
}

/**
 * The waiting room in front of the engine's start queue. Runs enter while the queue has room
 * and nobody waits; otherwise they wait, oldest first, and each queued execution that starts
 * lets one in (`release`). Children and retries never pass here: a parent would wait on its own child.
 */
export class Admission {
  private readonly waiting: (() => void)[] = [];
  /** Runs let in from the waiting room whose executions are not queued yet. */
  private letIn = 0;

  constructor(
    private readonly limit: number,
    private readonly queued: () => number,
  ) {}

  /**
   * Resolves when the run may be created: at once when there is room, else after waiting at most
   * `timeoutMs` (then EngineBusyError). The common case costs nothing: a timer exists only for a
   * run that has to wait. Resolves true when it waited: call `done()` once it is admitted or failed.
   */
  async enter(timeoutMs?: number): Promise<boolean> {
    if (this.queued() < this.limit && this.waiting.length === 0) return false;
    if (timeoutMs !== undefined && timeoutMs <= 0) throw new EngineBusyError();
    await new Promise<void>((resolve, reject) => {
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              const index = this.waiting.indexOf(admit);
              if (index !== -1) this.waiting.splice(index, 1);
              reject(new EngineBusyError());
            }, timeoutMs);
      const admit = () => {
        clearTimeout(timer);
        resolve();
      };
      this.waiting.push(admit);
    });
    return true;
  }

  /** A run that waited is now queued (or started, or failed). */
  done(): void {
    this.letIn -= 1;
    this.release();
  }

  /** Lets waiting runs in, oldest first, while the queue (with those already let in) has room. */
  release(): void {
    while (this.waiting.length > 0 && this.queued() < this.limit - this.letIn) {
      this.letIn += 1;
      this.waiting.shift()!();
    }
  }
}
