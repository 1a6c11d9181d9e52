import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * `sy_endpoints_unchanged(ids, stamps)` (PostgreSQL only): true when every webhook named still
 * has the row versions a delivery's decision was read from, else it raises SQLSTATE SYL02 with
 * the first changed id as the detail. A stamp is `<webhooks.xmin>:<workflows.xmin>` of the
 * webhook's row and its workflow's, as read with the endpoint (store/webhook-repository.ts):
 * an update or a delete of either row changes it, and PostgreSQL keeps a row version's xmin for
 * as long as that version lives.
 *
 * An API process serves a webhook delivery from its cached endpoint without first making sure
 * it has heard every change notice (db/table-notices.ts: a round trip on its listening
 * connection for every delivery or two); the commit that admits the execution calls this, so a
 * delivery decided on a stale endpoint writes nothing and is decided again on a fresh one
 * (webhooks/webhook-routes.ts).
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect.name !== 'postgres') return;
  await sql`
create function sy_endpoints_unchanged(p_ids text[], p_stamps text[])
returns boolean language plpgsql volatile as $check$
declare
  v_changed text;
begin
  select c.id into v_changed
  from unnest(p_ids, p_stamps) as c(id, stamp)
  left join webhooks w on w.id = c.id
  left join workflows f on f.id = w.workflow_id and f.workspace_id = w.workspace_id
  where (w.xmin::text || ':' || f.xmin::text) is distinct from c.stamp
  limit 1;
  if v_changed is not null then
    raise exception 'webhook % changed since its endpoint was read', v_changed using errcode = 'SYL02', detail = v_changed;
  end if;
  return true;
end
$check$`.execute(db);
}
