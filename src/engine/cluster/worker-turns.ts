/**
 * Turns (cluster.ts): new work is announced to one worker, not to all. Workers announce
 * themselves on WORKERS_CHANNEL; each turn carries a random number that picks one of them.
 * Every worker claiming for every delivery cost a claim that found nothing in all but one: with
 * two workers at one connection, a seventh of the cluster's CPU per delivery (bench/results/cluster.md).
 */

/** A turn: `~` and a random 32-bit number in base 36. */
export function turnToken(): string {
  return `~${Math.floor(Math.random() * 0x1_0000_0000).toString(36)}`;
}

/**
 * Which worker a turn belongs to. Each worker keeps the workers it has heard from
 * (WORKERS_CHANNEL) within `staleMs`; a turn's number modulo their count, in process id order,
 * picks one. All workers hear the same announcements, so they agree, except around a change:
 * a worker that starts or stops says so and is known at once, while one that dies unannounced
 * (SIGKILL) keeps its place until `staleMs` passes. A turn no worker takes is found by the next
 * poll (SWITCHYARD_POLL_MS), as a missed notification is; one that two take costs a claim that
 * finds nothing.
 */
export class WorkerTurns {
  /** Process id -> when it was last heard (`now`) and the executions it said it runs at once. */
  private readonly seen = new Map<string, { at: number; capacity: number }>();

  constructor(
    private readonly self: string,
    private readonly staleMs: number,
    /** Milliseconds on a monotonic clock. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * `+id` (or `+id;capacity`) or `-id`; true when `+id` named a worker not known (or gone stale)
   * until now, other than this one.
   */
  heard(message: string): boolean {
    const [id = '', said] = message.slice(1).split(';');
    // This worker hears its own announcements too; `live()` counts it without them.
    if (id === '' || id === this.self) return false;
    if (message[0] === '-') {
      this.seen.delete(id);
      return false;
    }
    if (message[0] !== '+') return false;
    const now = this.now();
    const last = this.seen.get(id);
    const capacity = Number(said);
    this.seen.set(id, { at: now, capacity: Number.isInteger(capacity) && capacity > 0 ? capacity : 0 });
    return last === undefined || now - last.at > this.staleMs;
  }

  /** The workers that share the turns as this one sees them (itself included), in process id order. */
  live(): string[] {
    return [this.self, ...this.others().map((worker) => worker.id)].sort();
  }

  /** The other live workers, with the capacity each announced (0: it did not say). */
  others(): { id: string; capacity: number }[] {
    const now = this.now();
    const others: { id: string; capacity: number }[] = [];
    for (const [id, heard] of this.seen) {
      // A worker gone stale (killed unannounced) is forgotten; its next announcement brings it back.
      if (now - heard.at <= this.staleMs) others.push({ id, capacity: heard.capacity });
      else this.seen.delete(id);
    }
    return others;
  }

  /** Whether the turn `~<base 36>` is this worker's. */
  mine(token: string): boolean {
    const live = this.live();
    if (live.length === 1) return true;
    const number = Number.parseInt(token.slice(1), 36);
    return live[(Number.isFinite(number) ? number : 0) % live.length] === this.self;
  }
}
