import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';
import { admitHandingOff } from './0020-lean-queue-scans.js';

/** A worker (`x.w`) is listening while another session holds its presence lock (0023 keeps it). */
export const PRESENCE_CHECK = `not pg_try_advisory_xact_lock_shared(1398210562, hashtext('sy_worker_' || replace(x.w, '-', '')))`;

/**
 * PostgreSQL only: `sy_admit_handing_off` (migrations 0019, 0020) no longer reads
 * `pg_stat_activity` to learn which workers can hear a hand-off; the rest of it is 0020's.
 *
 * That view copies every backend's status (each with its query text) the first time a
 * transaction reads it, and every admission is a transaction of its own: measured inside the
 * function with one delivery at a time (one API process, two workers), the look-up was ~0.13 ms
 * of the function's ~1.1 ms a call. Now a worker's listening connection holds an advisory lock
 * for as long as it lives (db/notifier.ts `identify`: class 1398210562, key `hashtext` of the
 * connection's name `sy_worker_<id>`), and the function asks for the same lock in shared mode
 * without waiting: refused, the worker is listening; granted (until the commit), it is not.
 * Shared requests never refuse each other, so API processes checking at once all see a dead
 * worker dead. A listening connection takes its lock waiting at most a moment, and PostgreSQL
 * refuses new requests that conflict with a waiting one, so the checks cannot keep it out.
 *
 * Two names hashing alike make a dead worker look alive while the other lives; what it is
 * handed then waits out the hand-off's short lease (engine/hand-off.ts), as when a worker dies
 * between the check and the commit.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect.name !== 'postgres') return;
  await sql.raw(admitHandingOff(PRESENCE_CHECK)).execute(db);
}
