import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Notifier } from '../../db/notifier.js';
import type { Clock } from '../../lib/clock.js';
import { transactionBuffer } from '../../db/transaction-buffer.js';
import {
  answerChannel,
  answerPayload,
  CANCEL_CHANNEL,
  parseProcessMessage,
  WORK_CHANNEL,
  WORKERS_CHANNEL,
  workerConnectionName,
  type AnswerMessage,
} from './cluster-messages.js';
import { ClaimPasses } from './claim-passes.js';
import { heldExecutions, holdsLease, releaseLeases, renewLeases, updateHeldExecution, type Claimed } from './cluster-store.js';
import { insertExecution, type ExecutionRow, type StepRow } from '../execution-store.js';
import { wakeParentHeld, writeHeldExecution, type LeaseChecks } from './held-commit.js';
import { HANDOFF_LEASE_MS, HandOff, handedRow, type HandedOff } from './hand-off.js';
import type { RunCoordination, RunNews } from '../commit/run-coordination.js';
import { turnToken, WorkerTurns } from './worker-turns.js';

export interface ClusterSettings {
  /** This process (logs, lease owner, answer channel). */
  processId: string;
  notifier: Notifier;
  leaseMs: number;
  heartbeatMs: number;
  pollMs: number;
  /** Live running executions allowed in the whole cluster. */
  maxRunning: number;
  /** This process claims and runs executions (roles `worker` and `all`); `api` does not. */
  runsSteps: boolean;
}

/** What the cluster needs of the engine it serves. */
export interface ClusterHost {
  freeSlots(): number;
  /** Executions this worker runs at once (announced, so API processes hand it no more). */
  capacity(): number;
  /** Runs the executions this worker just claimed in one pass, or was handed (their slots are taken here). */
  dispatchClaimed(claimed: Claimed[]): void;
  /** Executions this worker runs under its lease. */
  held(): string[];
  /** Another worker holds an execution this one was running: stop it, write nothing. */
  leaseLost(executionId: string): void;
  /** An execution was cancelled (possibly by another process). */
  cancelled(executionId: string): void;
  answer(message: AnswerMessage): void;
  /** Notifications may have been missed: look again at what this process waits for. */
  reconnected(): void;
  /** A wait became due at this time somewhere in the cluster. */
  dueAt(at: string): void;
  onError(error: unknown): void;
}

/**
 * One process's part in running executions with others on one PostgreSQL (DESIGN.md principle
 * 1). Workers claim runnable executions in batches under a lease (claim-passes.ts,
 * cluster-store.ts), renew the leases of what they run every heartbeat, and check theirs in
 * every commit of a run; what is new reaches the others by notification (work, cancellations,
 * answers for the process holding a delivery), with a jittered poll as the backstop for
 * anything missed.
 */
export class Cluster implements RunCoordination, LeaseChecks {
  readonly releaseColumns: Partial<ExecutionRow> = { lease_owner: null, lease_expires_at: null };
  /** Claims are made from construction (an engine that is never started still runs what it admits) until the drain. */
  private readonly claims: ClaimPasses;
  private heartbeat: NodeJS.Timeout | null = null;
  private readonly unlisten: (() => void)[] = [];
  private readonly turns: WorkerTurns;
  /** A turn token per transaction that announces work, so a group commit of many executions sends one notification. */
  private readonly tokens = new WeakMap<object, string>();
  /** The hand-off of each group commit of an API process (null: it found no worker). */
  private readonly handOffs = new WeakMap<object, HandOff | null>();
  /** The last announcement of this worker (`stop` waits for its leave to be sent). */
  private announced: Promise<void> = Promise.resolve();
  /** Set when executions were handed to this worker: their short leases are lengthened then (see `received`). */
  private accepting: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    readonly settings: ClusterSettings,
    private readonly host: ClusterHost,
  ) {
    this.turns = new WorkerTurns(settings.processId, settings.heartbeatMs * 2.5);
    const claimHost = {
      freeSlots: () => host.freeSlots(),
      dispatchClaimed: (claimed: Claimed[]) => host.dispatchClaimed(claimed),
      passTurn: () => this.passTurn(),
      onError: (error: unknown) => host.onError(error),
    };
    this.claims = new ClaimPasses(db, clock, settings, claimHost, settings.runsSteps);
  }

  get processId(): string {
    return this.settings.processId;
  }

  /** The workers this one shares turns with, itself included (see worker-turns.ts). */
  knownWorkers(): string[] {
    return this.turns.live();
  }

  /**
   * Listens (its own channel always; work and cancellations when it runs steps; the workers'
   * announcements) and, with `timers`, polls and renews leases.
   */
  async start(timers: boolean): Promise<void> {
    const { notifier } = this.settings;
    this.unlisten.push(await notifier.listen(answerChannel(this.processId), (payload) => this.onMessage(payload)));
    notifier.onReconnect(() => {
      this.host.reconnected();
      // Work announced while the connection was down went unheard.
      this.claims.arrived();
      if (this.claims.active) this.announcePresence('+');
      if (!this.settings.runsSteps) this.askWorkers();
    });
    if (!this.settings.runsSteps) {
      // An API process hands its new executions to the workers it has heard of (hand-off.ts).
      this.unlisten.push(await notifier.listen(WORKERS_CHANNEL, (payload) => void this.turns.heard(payload)));
      this.askWorkers();
      return;
    }
    // API processes hand work only to workers whose listening connection is up (by this name).
    await notifier.identify(workerConnectionName(this.processId));
    this.unlisten.push(
      await notifier.listen(WORK_CHANNEL, (payload) => {
        if (payload.startsWith('~')) return this.turnArrived(payload);
        if (payload) this.host.dueAt(payload);
        this.claims.arrived();
      }),
    );
    this.unlisten.push(
      await notifier.listen(WORKERS_CHANNEL, (payload) => {
        // A worker (or API process) new to this one learns of it at once: it hears this one's answer.
        if ((payload.startsWith('?') || this.turns.heard(payload)) && this.claims.active) this.announcePresence('+');
      }),
    );
    this.announcePresence('+');
    this.unlisten.push(await notifier.listen(CANCEL_CHANNEL, (payload) => this.host.cancelled(payload)));
    if (timers) {
      this.claims.startPolling();
      this.heartbeat = setInterval(() => {
        if (this.claims.active) this.announcePresence('+');
        void this.renew();
        void this.claims.watchLeases();
      }, this.settings.heartbeatMs);
      this.heartbeat.unref();
    }
    void this.requestClaim();
  }

  /** Stops claiming and listening (the drain); leases already held stay until released or finished. */
  stopClaiming(): void {
    if (this.claims.active) this.announcePresence('-');
    this.claims.stop();
  }

  /** Claims again after `stopClaiming` (a test that runs a second engine on the same database). */
  resumeClaiming(): void {
    if (!this.settings.runsSteps) return;
    this.claims.resume();
    this.announcePresence('+');
  }

  async stop(): Promise<void> {
    this.stopClaiming();
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    // Kept through the drain: runs handed over just before it still need their leases lengthened.
    if (this.accepting) clearTimeout(this.accepting);
    this.accepting = null;
    for (const unlisten of this.unlisten.splice(0)) unlisten();
    await this.claims.passing;
    await this.announced;
  }

  /** Work may exist (local admission, a finished run freeing a slot): claim what fits, once per burst (claim-passes.ts). */
  requestClaim(force = false): Promise<void> {
    return this.claims.request(force);
  }

  /** The claim pass under way, if any (for `idle()`). */
  get passing(): Promise<void> | null {
    return this.claims.passing;
  }

  /**
   * New work announced as a turn: only the worker whose turn it is claims (worker-turns.ts). The
   * others do not even note that work may exist (a run of theirs that ends would then claim in
   * vain): the worker whose turn it was hands on what it cannot take (claim-passes.ts).
   */
  private turnArrived(token: string): void {
    if (!this.turns.mine(token)) return;
    // A worker that stopped claiming (draining) hands its turn to the others.
    if (!this.claims.active) return void this.passTurn();
    this.claims.turn();
  }

  /** Work this worker cannot take may be left: every worker with room looks. */
  private passTurn(): void {
    this.settings.notifier.notify(this.db, WORK_CHANNEL, '').catch((error: unknown) => this.host.onError(error));
  }

  /**
   * One announcement at a time, in order: each is a statement on any connection of the pool, so
   * a `+` sent just before a drain's `-` could otherwise commit after it, and the others would
   * count a draining worker live for 2.5 heartbeats. A `+` whose turn comes after the drain is
   * not sent.
   */
  private announcePresence(sign: '+' | '-'): void {
    this.announced = this.announced
      .then(() => {
        if (sign === '+' && !this.claims.active) return;
        const message = sign === '+' ? `+${this.processId};${this.host.capacity()}` : `-${this.processId}`;
        return this.settings.notifier.notify(this.db, WORKERS_CHANNEL, message);
      })
      .catch((error: unknown) => this.host.onError(error));
  }

  private askWorkers(): void {
    this.settings.notifier.notify(this.db, WORKERS_CHANNEL, `?${this.processId}`).catch((error: unknown) => this.host.onError(error));
  }

  /** Renews every lease this worker holds; a run whose lease another worker took is stopped. */
  async renew(): Promise<void> {
    try {
      const before = this.host.held();
      if (before.length === 0) return;
      const kept = await renewLeases(this.db, this.processId, this.settings.leaseMs);
      for (const id of before) if (!kept.has(id)) this.host.leaseLost(id);
    } catch (error) {
      this.host.onError(error);
    }
  }

  /** Gives these executions up to the other workers at once (a drain past its grace). */
  async release(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      await releaseLeases(trx, this.processId, ids);
      await this.settings.notifier.notify(trx, WORK_CHANNEL, '');
    });
  }

  // RunCoordination: what every commit of a run does here.

  holds(trx: Transaction<Database>, executionId: string): Promise<boolean> {
    return holdsLease(trx, executionId, this.processId, this.settings.leaseMs);
  }

  updateHeld(trx: Transaction<Database>, executionId: string, changes: Partial<ExecutionRow>): Promise<boolean> {
    return updateHeldExecution(trx, executionId, this.processId, this.settings.leaseMs, changes);
  }

  writeExecution(
    trx: Transaction<Database>,
    executionId: string,
    changes: Partial<ExecutionRow>,
    awaited: readonly string[],
  ): Promise<void> {
    return writeHeldExecution(trx, this, executionId, changes, awaited);
  }

  wakeParent(trx: Transaction<Database>, parentId: string, childId: string, nowIso: string): Promise<void> {
    return wakeParentHeld(trx, parentId, childId, nowIso);
  }

  async announce(trx: Transaction<Database>, news: RunNews): Promise<void> {
    const { notifier } = this.settings;
    if (news.wokeParent) await notifier.notify(trx, WORK_CHANNEL, '');
    if (news.dueAt !== null) await notifier.notify(trx, WORK_CHANNEL, news.dueAt);
    const waiter = news.execution.waiter;
    // A waiter in this process hears it from the run itself, once the commit is durable.
    if (waiter === null || waiter === this.processId) return;
    const e = news.execution.id;
    const { response, ended } = news;
    if (!ended) {
      if (response !== null) await this.sendAnswer(trx, waiter, { e, k: 'r', v: response });
      return;
    }
    const end = { s: ended.status, o: (ended.status === 'completed' ? ended.output : ended.error) ?? undefined };
    await this.sendAnswer(trx, waiter, response === null ? { e, k: 'e', ...end } : { e, k: 'b', v: response, ...end });
  }

  committed(news: RunNews): void {
    if (news.dueAt !== null) this.host.dueAt(news.dueAt);
    // This process hears its own notifications too, but a claim now saves their round trip.
    // So does a wait committed already due (a child ended while its parent was committing it):
    // nothing else announces it in this process, where the parent's lease was just released.
    if (news.wokeParent || (news.dueAt !== null && news.dueAt <= this.clock.now())) this.claims.arrived();
  }

  /** In the commit that creates runnable work (an execution, a retry, a child): one worker's turn. */
  announceWork(trx: Transaction<Database>): Promise<void> {
    return this.settings.notifier.notify(trx, WORK_CHANNEL, this.turnOf(trx));
  }

  private turnOf(trx: Transaction<Database>): string {
    let token = this.tokens.get(trx);
    if (token === undefined) {
      token = turnToken();
      this.tokens.set(trx, token);
    }
    return token;
  }

  /**
   * A new `pending` execution in this commit: an API process hands it to a worker (`handOff`);
   * otherwise it is inserted and announced as a turn.
   */
  async admit(trx: Transaction<Database>, row: ExecutionRow, steps: StepRow[]): Promise<void> {
    if (this.handOff(trx, row, steps)) return;
    await insertExecution(trx, row, steps);
    await this.announceWork(trx);
  }

  /**
   * In the group commit of an API process: hands the execution to the live worker with the
   * most room (of equals, one at random), within the limits (hand-off.ts; whatever they leave is
   * announced as a turn). False when this process runs steps itself (it claims what it admits
   * at once), knows no worker, or the commit does not gather its writes.
   */
  private handOff(trx: Transaction<Database>, row: ExecutionRow, steps: readonly StepRow[]): boolean {
    if (this.settings.runsSteps) return false;
    const buffer = transactionBuffer(trx);
    if (!buffer) return false;
    let handOff = this.handOffs.get(trx);
    if (handOff === undefined) {
      // Decided once for the commit: one whose first execution found no worker inserts them all the usual way.
      const workers = shuffled(this.turns.others().filter((worker) => worker.capacity > 0));
      const { maxRunning, leaseMs } = this.settings;
      const made = workers.length > 0 ? new HandOff({ workers, maxRunning, leaseMs, turn: this.turnOf(trx) }) : null;
      if (made) buffer.gatherer('hand-off', () => made);
      this.handOffs.set(trx, made);
      handOff = made;
    }
    if (handOff === null) return false;
    handOff.add(row, steps);
    return true;
  }

  /** In the commit that cancels an execution: its worker stops it, its waiter (elsewhere) is told. */
  async announceCancel(trx: Transaction<Database>, execution: ExecutionRow): Promise<void> {
    await this.settings.notifier.notify(trx, CANCEL_CHANNEL, execution.id);
    if (execution.waiter !== null && execution.waiter !== this.processId)
      await this.sendAnswer(trx, execution.waiter, { e: execution.id, k: 'e', s: 'cancelled' });
  }

  private async sendAnswer(trx: Transaction<Database>, waiter: string, message: AnswerMessage): Promise<void> {
    await this.settings.notifier.notify(trx, answerChannel(waiter), answerPayload(message));
  }

  private onMessage(payload: string): void {
    const message = parseProcessMessage(payload);
    if (message?.answer) this.host.answer(message.answer);
    else if (message?.handed) void this.received(message.handed).catch((error: unknown) => this.host.onError(error));
  }

  /**
   * Executions an API process handed to this worker (hand-off.ts): they run at once. Their lease
   * is short until this worker has them: a quarter of it later every lease held is renewed (one
   * statement for all that arrived meanwhile; a run's own commits renew it too). A worker that
   * stopped claiming gives them back at once, for the others to take.
   */
  private async received(handed: HandedOff): Promise<void> {
    const entries =
      'c' in handed
        ? handed.c.map(({ row, steps }) => ({ row: handedRow(row, this.processId, handed.l, handed.n), steps }))
        : (await heldExecutions(this.db, this.processId, handed.i)).map((row) => ({ row, steps: null }));
    if (entries.length === 0) return;
    if (!this.claims.active) {
      await this.release(entries.map((entry) => entry.row.id));
      return;
    }
    this.host.dispatchClaimed(entries.map(({ row, steps }) => ({ row, steps, takeover: false, was: 'pending', dueAt: row.inserted_at })));
    if (this.accepting) return;
    this.accepting = setTimeout(
      () => {
        this.accepting = null;
        void this.renew();
      },
      Math.min(this.settings.leaseMs, HANDOFF_LEASE_MS) / 4,
    );
    this.accepting.unref();
  }
}

/** A copy in random order (Fisher-Yates). */
function shuffled<T>(items: T[]): T[] {
  const copy = items.slice();
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}
