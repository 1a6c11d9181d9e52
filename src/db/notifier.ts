import pg from 'pg';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './schema.js';
import { transactionBuffer } from './transaction-buffer.js';

type Db = Kysely<Database> | Transaction<Database>;
export type NotificationHandler = (payload: string) => void;

/**
 * Messages between the processes that share one PostgreSQL (LISTEN/NOTIFY): work to claim, a
 * cancellation, a respond step's answer for the API process holding the request, tables whose
 * cached reads went stale. A notification sent inside a transaction is delivered when it
 * commits, and never if it rolls back, so a message can never outrun the write it announces.
 * Delivery is best effort (a listener reconnecting misses what was sent meanwhile): every user
 * keeps a backstop (the claim poll, a full cache flush on `onReconnect`).
 */
export interface Notifier {
  /** Starts delivering `channel`'s messages to `handler`; resolves once the LISTEN is in place. */
  listen(channel: string, handler: NotificationHandler): Promise<() => void>;
  /** Sends `payload` (at most MAX_NOTIFY_PAYLOAD bytes) on `channel`; within a transaction, at its commit. */
  notify(db: Db, channel: string, payload: string): Promise<void>;
  /** Called after the listening connection was lost and made again (messages may have been missed). */
  onReconnect(handler: () => void): void;
  /** Called when the listening connection is lost, before it is made again: messages may go missing from now on. */
  onLost(handler: () => void): void;
  /**
   * Resolves true once every message committed before the call has reached its handlers; false
   * when that cannot be known (no listening connection, or it did not answer in time: it is then
   * dropped and made again). Used where "a write shows on the next request" must hold.
   */
  sync(): Promise<boolean>;
  /**
   * Names the listening connection (`application_name`, now and after every reconnection) and
   * has it hold the presence lock of that name for as long as it lives, so others can tell that
   * this process hears its notifications: an API process hands work only to workers whose
   * listening connection is up (engine/hand-off.ts, migration 0022).
   */
  identify(name: string): Promise<void>;
  close(): Promise<void>;
}

/** PostgreSQL refuses payloads of 8,000 bytes or more; larger messages go through a table and carry its key. */
export const MAX_NOTIFY_PAYLOAD = 7_900;

/**
 * How long `sync` waits for the listening connection's answer to a `select 1` (normally
 * ~0.1 ms). A connection that takes longer is treated as lost: its messages cannot be trusted
 * to arrive, and every request waiting on it would wait as long again.
 */
export const SYNC_TIMEOUT_MS = 1_000;

/** SQLSTATE 55P03: a lock wait ran out of lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * The advisory lock class of the presence locks: a listening connection named `n` holds
 * (PRESENCE_LOCK_CLASS, hashtext(n)) exclusively, and `sy_admit_handing_off` (migration 0022,
 * which spells the number out) asks for it in shared mode without waiting to learn whether it
 * is held.
 */
export const PRESENCE_LOCK_CLASS = 1398210562;

/**
 * How long a listening connection waits for its presence lock, and how long it pauses before
 * asking again when it did not get it: held by an older connection of the same process that the
 * server has not seen die yet, or for a moment in shared mode by an admission checking it.
 */
const PRESENCE_WAIT_MS = 200;
const PRESENCE_RETRY_MS = 1_000;

/** Channel names are identifiers: ours are lower-case ASCII, digits and underscores, under 63 bytes. */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertChannel(channel: string): void {
  if (!CHANNEL.test(channel)) throw new Error(`"${channel}" is not a valid notification channel name`);
}

/** Sends a notification now, or, in a group commit that buffers them, at its end (transaction-buffer.ts). */
export async function sendNotification(db: Db, channel: string, payload: string): Promise<void> {
  assertChannel(channel);
  if (Buffer.byteLength(payload) > MAX_NOTIFY_PAYLOAD)
    throw new Error(`notification payload of ${Buffer.byteLength(payload)} bytes on ${channel} exceeds ${MAX_NOTIFY_PAYLOAD}`);
  const buffer = transactionBuffer(db);
  if (buffer) return buffer.notify(channel, payload);
  await sql`select pg_notify(${channel}, ${payload})`.execute(db);
}

/**
 * One dedicated connection (outside the pool) holds every LISTEN of the process. It connects on
 * the first `listen`, and when it drops it reconnects (backing off up to 2 s), listens again to
 * every channel and tells the `onReconnect` handlers.
 */
export class PgNotifier implements Notifier {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private readonly handlers = new Map<string, Set<NotificationHandler>>();
  private readonly reconnectHandlers: (() => void)[] = [];
  private readonly lostHandlers: (() => void)[] = [];
  private closed = false;
  private retryMs = 50;
  /** The sync round trip in flight, and the one that starts when it ends (see sync). */
  private syncing: Promise<boolean> | null = null;
  private nextSync: Promise<boolean> | null = null;
  /** The last command sent on each listening connection: the next one waits for it (see command). */
  private readonly commands = new WeakMap<pg.Client, Promise<unknown>>();

  /** The listening connection's `application_name` (see `identify`). */
  private name: string | null = null;

  constructor(private readonly url: string) {}

  async identify(name: string): Promise<void> {
    // Inlined in a SET below: held to the channels' identifier rules.
    if (!CHANNEL.test(name)) throw new Error(`"${name}" is not a valid connection name`);
    this.name = name;
    // A connection being made may have read the name before it was set: it is named here too.
    const client = this.client ?? (this.connecting ? await this.connecting.catch(() => null) : null);
    if (client) await this.applyName(client);
  }

  async listen(channel: string, handler: NotificationHandler): Promise<() => void> {
    assertChannel(channel);
    let set = this.handlers.get(channel);
    const fresh = set === undefined;
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
    }
    set.add(handler);
    const client = await this.connect();
    if (fresh) await this.command(client, `LISTEN ${channel}`);
    return () => {
      const current = this.handlers.get(channel);
      current?.delete(handler);
      if (current && current.size === 0) {
        this.handlers.delete(channel);
        if (this.client) this.command(this.client, `UNLISTEN ${channel}`).catch(() => {});
      }
    };
  }

  notify(db: Db, channel: string, payload: string): Promise<void> {
    return sendNotification(db, channel, payload);
  }

  onReconnect(handler: () => void): void {
    this.reconnectHandlers.push(handler);
  }

  onLost(handler: () => void): void {
    this.lostHandlers.push(handler);
  }

  /**
   * A `select 1` on the listening connection. PostgreSQL signals the listening sessions while
   * the notifying transaction commits, before that commit's answer leaves for its client, and a
   * session sends what it was signalled for before it reports ready for the next query: so the
   * answer to a query sent after a commit comes after that commit's messages, which pg hands to
   * the handlers in order as it reads them. Callers waiting at the same time share round trips:
   * one is in flight at a time, and a caller that arrives while one is in flight (it may have
   * passed the server before the caller's predecessors committed) waits for the next, which
   * serves everyone who arrived meanwhile.
   */
  sync(): Promise<boolean> {
    if (this.syncing === null) return this.startSync();
    this.nextSync ??= this.syncing.then(() => {
      this.nextSync = null;
      return this.startSync();
    });
    return this.nextSync;
  }

  private startSync(): Promise<boolean> {
    const run = this.roundTrip().finally(() => {
      if (this.syncing === run) this.syncing = null;
    });
    this.syncing = run;
    return run;
  }

  private async roundTrip(): Promise<boolean> {
    const client = this.client;
    if (!client) return false;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(resolve, SYNC_TIMEOUT_MS, false)));
    try {
      const answered = await Promise.race([
        this.command(client, 'select 1').then(
          () => true,
          () => false,
        ),
        timedOut,
      ]);
      if (!answered) this.lost(client);
      return answered && this.client === client;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client ?? (this.connecting ? await this.connecting.catch(() => null) : null);
    this.client = null;
    await client?.end().catch(() => {});
  }

  /** Gives the connection the name `identify` set, if any, and has it take the name's presence lock. */
  private async applyName(client: pg.Client): Promise<void> {
    if (this.name === null) return;
    await this.command(client, `SET application_name = '${this.name}'`);
    await this.holdPresence(client, this.name);
  }

  /**
   * Takes the presence lock of `name` on the connection, for the connection's life (a session
   * lock). The wait is short and bounded (lock_timeout, local to the statement's transaction):
   * while the connection waits, PostgreSQL refuses the admissions' shared requests, which then
   * count the worker live, and a lock held elsewhere cannot stall the commands queued behind.
   * Not granted, it asks again a second later for as long as this is the listening connection.
   */
  private async holdPresence(client: pg.Client, name: string): Promise<void> {
    const text = `do $$ begin perform set_config('lock_timeout', '${PRESENCE_WAIT_MS}', true); perform pg_advisory_lock(${PRESENCE_LOCK_CLASS}, hashtext('${name}')); end $$`;
    try {
      await this.command(client, text);
    } catch (error) {
      if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw error;
      setTimeout(() => {
        if (this.closed || this.name !== name || this.client !== client) return;
        this.holdPresence(client, name).catch(() => this.lost(client));
      }, PRESENCE_RETRY_MS).unref();
    }
  }

  /**
   * Sends one command on the listening connection once the previous one is answered. pg queues
   * queries sent on a busy client itself, but that use is deprecated (pg 9 refuses it): the
   * drain's UNLISTENs, a LISTEN and a sync's `select 1` may all be asked at once. Per connection:
   * a command stuck on a lost one never holds up its replacement.
   */
  private command(client: pg.Client, text: string): Promise<unknown> {
    const sent = (this.commands.get(client) ?? Promise.resolve()).then(() => client.query(text));
    this.commands.set(
      client,
      sent.catch(() => {}),
    );
    return sent;
  }

  private connect(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async open(): Promise<pg.Client> {
    // Keep-alive probes let the kernel notice a peer that vanished without closing the socket.
    const client = new pg.Client({ connectionString: this.url, keepAlive: true });
    client.on('notification', (message) => {
      const set = this.handlers.get(message.channel);
      if (!set) return;
      for (const handler of set) handler(message.payload ?? '');
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    await client.connect();
    await this.applyName(client);
    for (const channel of this.handlers.keys()) await this.command(client, `LISTEN ${channel}`);
    if (this.closed) {
      await client.end().catch(() => {});
      throw new Error('notifier closed');
    }
    this.client = client;
    this.retryMs = 50;
    return client;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    client.end().catch(() => {});
    if (this.closed) return;
    for (const handler of this.lostHandlers) handler();
    const retry = () => {
      if (this.closed) return;
      this.connect().then(
        () => {
          for (const handler of this.reconnectHandlers) handler();
        },
        () => {
          this.retryMs = Math.min(this.retryMs * 2, 2_000);
          setTimeout(retry, this.retryMs).unref();
        },
      );
    };
    setTimeout(retry, this.retryMs).unref();
  }
}
