import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { claimExecutions, nextForeignExpiry, type Claimed } from './cluster-store.js';

export interface ClaimSettings {
  /** The lease owner claims are made for. */
  processId: string;
  leaseMs: number;
  pollMs: number;
  /** Live running executions allowed in the whole cluster. */
  maxRunning: number;
}

/** What claiming needs of the worker it claims for. */
export interface ClaimHost {
  freeSlots(): number;
  /** Runs the executions just claimed (their slots are taken there). */
  dispatchClaimed(claimed: Claimed[]): void;
  /** Work this worker cannot take may be left: every worker with room should look (an empty `sy_work`). */
  passTurn(): void;
  onError(error: unknown): void;
}

/**
 * A worker's claims (cluster.ts, DESIGN.md principle 1): passes that claim runnable executions
 * under a lease while this worker has room (cluster-store.ts), started by announced work, a turn
 * of this worker's, a run ending here, the jittered poll that backs notifications up, and the
 * moment another worker's earliest lease runs out. One pass at a time; a request during a pass
 * runs one more after it.
 */
export class ClaimPasses {
  private pass: Promise<void> | null = null;
  private again = false;
  /** Bumped by every announcement of work: a pass that ran meanwhile may have missed it. */
  private workEpoch = 0;
  /** Whether a claim pass may find anything (false after a pass found less than it could take, and no work was announced since). */
  private mayHaveWork = true;
  /** A turn of this worker came: a pass that fills this worker up must hand the rest on (see claimWhileRoom). */
  private turnPending = false;
  private claiming: boolean;
  private poll: NodeJS.Timeout | null = null;
  /** Set for the moment another worker's earliest lease expires (see `watchLeases`). */
  private expiry: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly settings: ClaimSettings,
    private readonly host: ClaimHost,
    claiming: boolean,
  ) {
    this.claiming = claiming;
  }

  /** Claims are made (from construction for a process that runs steps, until the drain). */
  get active(): boolean {
    return this.claiming;
  }

  /** The claim pass under way, if any. */
  get passing(): Promise<void> | null {
    return this.pass;
  }

  /** Work may exist (local admission, a finished run freeing a slot): claim what fits, once per burst. */
  request(force = false): Promise<void> {
    if (!this.claiming) return Promise.resolve();
    if (force) {
      // A pass under way may have read before this work existed: it must not conclude there is none.
      this.workEpoch += 1;
      this.mayHaveWork = true;
    }
    if (!this.mayHaveWork) return Promise.resolve();
    if (this.pass) {
      this.again = true;
      return this.pass;
    }
    this.pass = this.claimWhileRoom()
      .catch((error: unknown) => this.host.onError(error))
      .finally(() => {
        this.pass = null;
        if (this.again) {
          this.again = false;
          void this.request();
        }
      });
    return this.pass;
  }

  /** Work was announced (or may have been missed): claim. */
  arrived(): void {
    this.workEpoch += 1;
    this.mayHaveWork = true;
    void this.request();
  }

  /** New work came as this worker's turn: claim, and hand on what this worker cannot take. */
  turn(): void {
    this.turnPending = true;
    this.arrived();
  }

  /** Polls from now on, jittered, as the backstop for notifications missed. */
  startPolling(): void {
    // Jittered, so workers started together do not poll in step.
    const delay = this.settings.pollMs * (0.8 + Math.random() * 0.4);
    this.poll = setTimeout(() => {
      this.poll = null;
      if (!this.claiming) return;
      void this.request(true).finally(() => {
        if (this.claiming) this.startPolling();
      });
    }, delay);
    this.poll.unref();
  }

  /** Stops claiming (the drain): no pass, poll or expiry watch starts from now on. */
  stop(): void {
    this.claiming = false;
    if (this.poll) clearTimeout(this.poll);
    this.poll = null;
    if (this.expiry) clearTimeout(this.expiry);
    this.expiry = null;
  }

  /** Claims again after `stop` (a test that runs a second engine on the same database). */
  resume(): void {
    this.claiming = true;
    void this.request(true);
  }

  /**
   * Every heartbeat: when does the earliest lease of another worker expire? A timer claims at
   * that moment, so the executions of a worker that died are taken over when its lease runs out
   * rather than at the next poll (bench/results/cluster.md: the takeover ran 4 s past the
   * lease's expiry at the default poll on a loaded machine). The delay is counted on the
   * database's clock, as the leases are. A live worker's renewal moves its expiry on, and the
   * claim then finds nothing: one claim query per expiry watched, at most one a heartbeat.
   */
  async watchLeases(): Promise<void> {
    try {
      if (!this.claiming) return;
      const inMs = await nextForeignExpiry(this.db, this.settings.processId);
      if (this.expiry) clearTimeout(this.expiry);
      this.expiry = null;
      if (inMs === null || !this.claiming) return;
      this.expiry = setTimeout(
        () => {
          this.expiry = null;
          void this.request(true);
        },
        Math.max(0, Math.ceil(inMs)) + 1,
      );
      this.expiry.unref();
    } catch (error) {
      this.host.onError(error);
    }
  }

  private async claimWhileRoom(): Promise<void> {
    const turn = this.turnPending;
    this.turnPending = false;
    // On its turn, work it leaves (it is full, or a limit held some back) goes to every worker.
    let left = false;
    try {
      while (this.claiming) {
        const capacity = this.host.freeSlots();
        if (capacity <= 0) {
          left = true;
          return;
        }
        const epoch = this.workEpoch;
        const { processId, maxRunning, leaseMs } = this.settings;
        const { claimed, heldBack } = await claimExecutions(this.db, {
          owner: processId,
          nowIso: this.clock.now(),
          capacity,
          maxRunning,
          leaseMs,
        });
        if (claimed.length > 0) this.host.dispatchClaimed(claimed);
        if (claimed.length < capacity) {
          // A claim says work was held back whenever the cluster's running count leaves it less
          // room than it has slots (it cannot tell whether any was waiting): handing on for that
          // would send every other worker claiming after most turns. One that claimed nothing
          // hands on; one that claimed some claims again when those runs end.
          left = heldBack && claimed.length === 0;
          // Nothing left to claim (and nothing held back by a limit a finishing run may lift)
          // until work is announced: finishing runs then cost no claim query.
          if (epoch === this.workEpoch && !heldBack) this.mayHaveWork = false;
          return;
        }
      }
    } finally {
      if (turn && left) this.host.passTurn();
    }
  }
}
