/**
 * Pauses before an execution whose run failed in this process is taken up again. A run fails
 * when one of its commits cannot land (the database was busy past its timeout, the disk full, an
 * I/O error): its last commit stands, and the execution stays `running`, until its next start
 * on SQLite, and in a cluster until another worker takes its expired lease over (a worker never
 * takes over its own, so a lone worker would also wait for its next start). Three attempts,
 * further and further apart: enough to ride out a busy or full database, and bounded, since
 * each attempt runs the step that was in flight again (its effects at least once, as after a
 * restart) and a commit that fails for good must not repeat them for ever. After the last, the
 * execution waits for the next start, and the error says so.
 */
export const RECOVERY_DELAYS_MS: readonly number[] = [1_000, 5_000, 30_000];

/** What taking an execution up again found. */
export type Recovered = 'resumed' | 'settled';

export class RunRecovery {
  /** Attempts made for executions whose runs keep failing. */
  private readonly attempts = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();

  /**
   * `resume(id)`: runs the execution again if it is still `running` and not in flight here
   * ('resumed'), else 'settled'; a rejection counts as a failed attempt.
   */
  constructor(
    private readonly resume: (executionId: string) => Promise<Recovered>,
    private readonly gaveUp: (executionId: string, attempts: number) => void,
    private readonly delays: readonly number[] = RECOVERY_DELAYS_MS,
  ) {}

  /** A run of this execution failed: take it up again after the next pause, if any is left. */
  failed(executionId: string): void {
    const made = this.attempts.get(executionId) ?? 0;
    if (made >= this.delays.length) {
      this.attempts.delete(executionId);
      this.gaveUp(executionId, made);
      return;
    }
    this.attempts.set(executionId, made + 1);
    clearTimeout(this.timers.get(executionId));
    const timer = setTimeout(() => {
      this.timers.delete(executionId);
      this.resume(executionId).then(
        (outcome) => {
          if (outcome === 'settled') this.attempts.delete(executionId);
        },
        () => this.failed(executionId),
      );
    }, this.delays[made]);
    timer.unref();
    this.timers.set(executionId, timer);
  }

  /** A run of this execution ended without failing: its count starts over. */
  succeeded(executionId: string): void {
    this.attempts.delete(executionId);
  }

  /** Attempts pending for this execution (tests). */
  pending(executionId: string): boolean {
    return this.timers.has(executionId);
  }

  stop(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.attempts.clear();
  }
}
