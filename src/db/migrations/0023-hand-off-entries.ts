import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';
import { admitHandingOff } from './0020-lean-queue-scans.js';
import { PRESENCE_CHECK } from './0022-hand-off-presence-locks.js';

/**
 * PostgreSQL only: `sy_admit_handing_off` takes the workers' notification entries from the API
 * process (`p_entries`, one JSON text per execution: `{"row": ..., "steps": [...]}`, the rows as
 * it made them) and joins those, instead of reading the rows it just inserted back and turning
 * them into JSON (`to_jsonb`, `jsonb_agg`, then text). Measured inside one transaction, 400
 * admissions handing one execution each to a live worker: building the notification was ~0.19
 * ms of the function's ~0.83 ms a call, the largest part after the executions' insert; joining
 * texts costs next to nothing. The API process serialises each row once either way.
 *
 * The notification now carries the rows as the API process wrote them (`pending`, no lease),
 * with the two values the function decided for all of them: `l`, the lease, and `n`, the time
 * written. The worker makes each row as inserted from those and its own id
 * (engine/hand-off.ts `handedRow`, the TypeScript side of migration 0020's EXECUTION_VALUES for
 * a handed row). The old function (eight arguments) is dropped: processes of an older version
 * cannot share the database with this one (docs/deploy.md).
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect.name !== 'postgres') return;
  await sql`drop function sy_admit_handing_off(jsonb, jsonb, text, text[], integer[], integer, integer, text)`.execute(db);
  await sql.raw(admitHandingOff(PRESENCE_CHECK, true)).execute(db);
}
