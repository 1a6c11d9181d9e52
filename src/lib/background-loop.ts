/**
 * One in-process loop for durable background work (embedding documents, re-embedding bases,
 * compacting memories). The work lives in the database as rows with a lease (owner, expiry), so
 * it survives restarts and several processes can share it; this loop only decides when to look.
 * It runs every task until none reports progress, then sleeps until poked (new work committed
 * here) or `pollMs` passes (work from other processes, retries coming due). Started by `serve`
 * and stopped on close, like the retention pruner.
 */
export interface BackgroundTask {
  name: string;
  /** Does due work; resolves with how many items it handled (0: nothing due). */
  run(signal: AbortSignal): Promise<number>;
  /** Gives up leases this process holds (clean shutdown), so a restart resumes at once. */
  release?(): Promise<void>;
}

export class BackgroundLoop {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private controller = new AbortController();
  private started = false;

  constructor(
    private readonly tasks: BackgroundTask[],
    private readonly options: { pollMs?: number; onError?: (error: unknown, task: string) => void } = {},
  ) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.controller = new AbortController();
    this.poke();
  }

  /** New work was committed: look now (or right after the pass in progress). */
  poke(): void {
    if (!this.started) return;
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
        this.poke();
        return;
      }
      this.timer = setTimeout(() => this.poke(), this.options.pollMs ?? 1000);
      this.timer.unref?.();
    });
  }

  /** Runs every task until a whole pass handles nothing; for tests and the CLI. */
  async drain(maxPasses = 1000): Promise<void> {
    for (let pass = 0; pass < maxPasses; pass++) {
      if ((await this.runTasks()) === 0) return;
    }
  }

  private async pass(): Promise<void> {
    for (let rounds = 0; rounds < 100 && this.started; rounds++) {
      if ((await this.runTasks()) === 0) return;
    }
  }

  private async runTasks(): Promise<number> {
    let handled = 0;
    for (const task of this.tasks) {
      if (this.controller.signal.aborted && this.started) break;
      try {
        handled += await task.run(this.controller.signal);
      } catch (error) {
        this.options.onError?.(error, task.name);
      }
    }
    return handled;
  }

  /** Stops looking, aborts the work in flight, waits for it, and releases this process's leases. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
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
