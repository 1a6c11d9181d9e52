import type { ExecutionObserver } from '../../engine/engine.js';

/**
 * Waits for the first respond step among the executions one delivery started: resolves with its
 * answer, with null once every observed execution ended without answering, or with null at the
 * timeout (the runs go on; the sender simply gets no reply).
 */
export class ReplyWaiter {
  private observed = 0;
  private ended = 0;
  private committed = false;
  private resolve!: (response: unknown) => void;
  private readonly settled = new Promise<unknown>((r) => (this.resolve = r));

  /** One observer per execution, handed to the engine before the commit. */
  observe = (): ExecutionObserver => {
    this.observed += 1;
    let done = false;
    return {
      responded: (response) => this.resolve(response),
      ended: () => {
        if (done) return;
        done = true;
        this.ended += 1;
        this.check();
      },
    };
  };

  /** After the start: `count` executions were committed (observers of a failed attempt never end). */
  started(count: number): void {
    this.committed = true;
    this.observed = count;
    this.check();
  }

  async wait(timeoutMs: number): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((r) => (timer = setTimeout(() => r(null), timeoutMs)));
    try {
      return await Promise.race([this.settled, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private check(): void {
    if (this.committed && this.ended >= this.observed) this.resolve(null);
  }
}
