/**
 * One in-process loop for durable background work (embedding documents, re-embedding bases,
 * compacting memories). The work lives in the database as rows with a lease (owner, expiry), so
 * it survives restarts and several processes can share it; this loop only decides when to look.
 * It runs the poked tasks until none has work left, then sleeps until poked (new work committed
 * here, for one task or all) or `pollMs` passes (every task looks: work from other processes,
 * retries coming due). Started by `serve` and stopped on close, like the retention pruner.
 */
export interface BackgroundTask {
  name: string;
  /** Does due work; resolves with how many items it handled (0: nothing due). */
  run(signal: AbortSignal): Promise<number>;
  /**
   * The most items one run takes. A run that handled fewer found everything that was due, so
   * the task is not run again in this pass unless poked meanwhile. Unset: it runs until a run
   * handles nothing.
   */
  batch?: number;
  /** Gives up leases this process holds (clean shutdown), so a restart resumes at once. */
  release?(): Promise<void>;
}

export class BackgroundLoop {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private controller = new AbortController();
  private started = false;
  /** A poke is waiting out `gatherMs` before its pass. */
  private gathering = false;
  /**
   * Pokes per task. A pass runs the tasks poked since their last run (all of them when the poll
   * timer fires): every ingested document pokes, and running the other tasks' claims too (each
   * an UPDATE with its query built) cost the ingest benchmark more than its FTS5 indexing.
   */
  private readonly pokes: number[];
  private readonly seen: number[];

  constructor(
    private readonly tasks: BackgroundTask[],
    private readonly options: {
      pollMs?: number;
      /**
       * How long a poke waits before it starts a pass (default 0): work committed meanwhile is
       * taken by the same pass, in batches (see embedding-jobs.ts).
       */
      gatherMs?: number;
      onError?: (error: unknown, task: string) => void;
    } = {},
  ) {
    this.pokes = tasks.map(() => 1);
    this.seen = tasks.map(() => 0);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.controller = new AbortController();
    this.poke();
  }

  /**
   * New work was committed: look now (or right after the pass in progress). With a task's name,
   * only that task needs to look; without, every task does.
   */
  poke(task?: string): void {
    for (const [i, candidate] of this.tasks.entries()) if (task === undefined || candidate.name === task) this.pokes[i]! += 1;
    if (!this.started || this.running || this.gathering) {
      this.kick();
      return;
    }
    const gatherMs = this.options.gatherMs ?? 0;
    if (gatherMs <= 0) {
      this.kick();
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.gathering = true;
    this.timer = setTimeout(() => {
      this.gathering = false;
      this.kick();
    }, gatherMs);
    this.timer.unref?.();
  }

  private kick(): void {
    if (!this.started || this.gathering) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.running = this.pass().finally(() => {
      this.running = null;
      if (!this.started) return;
      if (this.again) {
        this.again = false;
        this.kick();
        return;
      }
      this.timer = setTimeout(() => this.poke(), this.options.pollMs ?? 1000);
      this.timer.unref?.();
    });
  }

  /** Runs every task until a whole pass handles nothing; for tests and the CLI. */
  async drain(maxPasses = 1000): Promise<void> {
    for (let pass = 0; pass < maxPasses; pass++) {
      if ((await this.runTasks(false)).handled === 0) return;
    }
  }

  private async pass(): Promise<void> {
    for (let rounds = 0; rounds < 100 && this.started; rounds++) {
      if (!(await this.runTasks(true)).more) return;
    }
  }

  /**
   * Runs the tasks, or only those poked since they last settled (`onlyPoked`). `more`: some task
   * has to run again (it filled its batch, handled items without a batch size, or was poked while
   * it ran).
   */
  private async runTasks(onlyPoked: boolean): Promise<{ handled: number; more: boolean }> {
    let handled = 0;
    let more = false;
    for (const [i, task] of this.tasks.entries()) {
      if (this.controller.signal.aborted && this.started) break;
      if (onlyPoked && this.seen[i] === this.pokes[i]) continue;
      const pokes = this.pokes[i]!;
      let done = 0;
      try {
        done = await task.run(this.controller.signal);
      } catch (error) {
        this.options.onError?.(error, task.name);
      }
      handled += done;
      if (done === 0 || (task.batch !== undefined && done < task.batch)) this.seen[i] = pokes;
      if (this.seen[i] !== this.pokes[i]) more = true;
    }
    return { handled, more };
  }

  /** Stops looking, aborts the work in flight, waits for it, and releases this process's leases. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.gathering = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.controller.abort(new Error('shutting down'));
    await this.running;
    for (const task of this.tasks) {
      try {
        await task.release?.();
      } catch (error) {
        this.options.onError?.(error, task.name);
      }
    }
  }
}
