import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';
import { STEP_COLUMNS } from './0019-hand-off.js';

/** The executions' columns, each as the row given (`x`) has it, or as a handed-off row (`a.owner` set) starts. */
export const EXECUTION_VALUES: ReadonlyArray<[string, string]> = [
  ['id', 'x.id'],
  ['workspace_id', 'x.workspace_id'],
  ['workflow_id', 'x.workflow_id'],
  ['workflow_snapshot_id', 'x.workflow_snapshot_id'],
  ['status', "case when a.owner is null then x.status else 'running' end"],
  ['triggered_by_step_id', 'x.triggered_by_step_id'],
  ['parent_execution_id', 'x.parent_execution_id'],
  ['call_depth', 'x.call_depth'],
  ['retry_of_execution_id', 'x.retry_of_execution_id'],
  ['user_id', 'x.user_id'],
  ['started_at', 'case when a.owner is null then x.started_at else coalesce(x.started_at, p_now) end'],
  ['finished_at', 'x.finished_at'],
  ['inserted_at', 'x.inserted_at'],
  ['updated_at', 'case when a.owner is null then x.updated_at else p_now end'],
  ['context', 'x.context'],
  ['inputs', 'x.inputs'],
  ['output', 'x.output'],
  ['error', 'x.error'],
  ['step_count', 'x.step_count'],
  ['run_at', 'case when a.owner is null then x.run_at end'],
  ['lease_owner', 'coalesce(a.owner, x.lease_owner)'],
  ['lease_expires_at', 'case when a.owner is null then x.lease_expires_at else v_lease end'],
  ['response', 'x.response'],
  ['concurrency_limit', 'x.concurrency_limit'],
  ['waiter', 'x.waiter'],
];

/** Sends each worker its payload, or only the ids when the payload would not fit a notification. */
const SEND_PAYLOAD = `      if octet_length(v_payload) > 7900 then
        v_payload := jsonb_build_object('k', 'h', 'i', to_jsonb(r.ids))::text;
      end if;
      perform pg_notify('sy_answer_' || replace(r.owner, '-', ''), v_payload);
    end loop;
  end if;
`;

/** The workers' notifications, of the rows read back (0019, 0020, 0022). */
const NOTIFY_ROWS = `  if cardinality(v_ids) > 0 then
    -- One notification for each worker, on its own channel.
    for r in
      select e.lease_owner as owner, array_agg(e.id order by e.inserted_at, e.id) as ids,
        jsonb_build_object('k', 'h', 'c', jsonb_agg(jsonb_build_object('row', to_jsonb(e.*), 'steps', (
          select coalesce(jsonb_agg(to_jsonb(s.*) order by s.inserted_at, s.id), '[]'::jsonb) from execution_steps s where s.workflow_execution_id = e.id))
          order by e.inserted_at, e.id))::text as payload
      from executions e where e.id = any(v_ids) group by e.lease_owner
    loop
      v_payload := r.payload;
${SEND_PAYLOAD}`;

/**
 * The workers' notifications, of the entries the API process wrote (0023): the rows as it made
 * them, `pending`; `l` and `n`, the lease and the time the rows were written with, let the
 * worker make each row as inserted (engine/hand-off.ts `handedRow`).
 */
const NOTIFY_ENTRIES = `  if cardinality(v_ids) > 0 then
    -- One notification for each worker, on its own channel.
    for r in
      select a.owner, array_agg(a.id order by a.n) as ids, string_agg(p_entries[a.place], ',' order by a.n) as entries
      from unnest(v_ids, v_owners, v_places) with ordinality as a(id, owner, place, n) group by a.owner
    loop
      v_payload := '{"k":"h","l":' || to_json(v_lease)::text || ',"n":' || to_json(p_now)::text || ',"c":[' || r.entries || ']}';
${SEND_PAYLOAD}`;

/**
 * The text of this migration's `sy_admit_handing_off`, which keeps the workers given for which
 * `listening` (a condition on `x.w`, a worker's id) holds: here its listening connection is in
 * `pg_stat_activity`; migration 0022 asks its presence lock instead. With `entries` (migration
 * 0023) it takes a third argument, `p_entries`: each execution's notification entry as the API
 * process wrote it, which the workers' notifications are made of instead of rows read back.
 */
export function admitHandingOff(
  listening: string,
  entries = false,
  notify: { declarations: string; block: string } = { declarations: '', block: entries ? NOTIFY_ENTRIES : NOTIFY_ROWS },
  tables: { executions: ReadonlyArray<[string, string]>; steps: string } = { executions: EXECUTION_VALUES, steps: STEP_COLUMNS },
): string {
  const columns = tables.executions.map(([column]) => column).join(', ');
  const values = tables.executions.map(([, value]) => value).join(', ');
  return `
create or replace function sy_admit_handing_off(p_executions jsonb, p_steps jsonb, ${entries ? 'p_entries text[], ' : ''}p_now text, p_workers text[], p_capacities integer[], p_max_running integer, p_lease_ms integer, p_turn text)
returns boolean language plpgsql volatile set plan_cache_mode = force_generic_plan set enable_bitmapscan = off set enable_seqscan = off as $admit$
declare
  v_db_now text;
  v_lease text;
  r record;
  v_workers text[];
  v_room integer[];
  v_counts jsonb := '{}';
  v_blocked text[] := '{}';
  v_total integer := 0;
  v_n integer;
  v_best integer;
  v_ids text[] := '{}';
  v_owners text[] := '{}';
  v_payload text;
  v_older text;${entries ? "\n  v_places integer[] := '{}';" : ''}${notify.declarations}
begin
  -- Only workers whose listening connection is up can hear a hand-off.
  select array_agg(x.w order by x.i), array_agg(x.c order by x.i) into v_workers, v_room
  from unnest(p_workers, p_capacities) with ordinality as x(w, c, i)
  where ${listening};
  if v_workers is not null then
    perform pg_advisory_xact_lock(1398210561);
    v_db_now := to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
    for r in
      select workflow_id, min(concurrency_limit) as lim, count(*)::integer as live
      from executions where status = 'running' and lease_expires_at > v_db_now group by workflow_id
    loop
      v_counts := v_counts || jsonb_build_object(r.workflow_id, r.live);
      v_total := v_total + r.live;
      if r.lim is not null and r.live >= r.lim then v_blocked := array_append(v_blocked, r.workflow_id); end if;
    end loop;
    -- Each worker's room: its capacity less the live leases it holds.
    for r in
      select lease_owner, count(*)::integer as live from executions
      where status = 'running' and lease_expires_at > v_db_now and lease_owner = any(v_workers) group by lease_owner
    loop
      v_room[array_position(v_workers, r.lease_owner)] := v_room[array_position(v_workers, r.lease_owner)] - r.live;
    end loop;
    -- Due work of a workflow at its own limit is no backlog: only that workflow's end lets it in.
    -- The oldest, by run_at, so that whatever the statistics the plan walks the due index (inside
    -- EXISTS the planner would drop the order, and a sequential scan could look cheaper).
    select id into v_older from executions where run_at <= p_now and status in ('pending', 'waiting')
      and not (workflow_id = any(v_blocked)) order by run_at limit 1;
    if v_older is null then
      for r in
        select e ->> 'id' as id, e ->> 'workflow_id' as workflow_id, (e ->> 'concurrency_limit')::integer as lim${entries ? ', x.i::integer as place' : ''}
        from jsonb_array_elements(p_executions) with ordinality as x(e, i) order by x.i
      loop
        exit when v_total >= p_max_running;
        v_n := coalesce((v_counts ->> r.workflow_id)::integer, 0);
        continue when r.lim is not null and v_n >= r.lim;
        -- The worker with the most room (the first of equals, in the order given).
        v_best := null;
        for i in 1 .. cardinality(v_workers) loop
          if v_room[i] > 0 and (v_best is null or v_room[i] > v_room[v_best]) then v_best := i; end if;
        end loop;
        exit when v_best is null;
        v_room[v_best] := v_room[v_best] - 1;
        v_counts := v_counts || jsonb_build_object(r.workflow_id, v_n + 1);
        v_total := v_total + 1;
        v_ids := array_append(v_ids, r.id);
        v_owners := array_append(v_owners, v_workers[v_best]);${entries ? '\n        v_places := array_append(v_places, r.place);' : ''}
      end loop;
    end if;
  end if;
  v_lease := to_char((clock_timestamp() + make_interval(secs => p_lease_ms / 1000.0)) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
  insert into executions (${columns})
    select ${values}
    from jsonb_populate_recordset(null::executions, p_executions) as x
    left join unnest(v_ids, v_owners) as a(id, owner) on a.id = x.id;
  if jsonb_array_length(p_steps) > 0 then
    insert into execution_steps (${tables.steps})
      select ${tables.steps} from jsonb_populate_recordset(null::execution_steps, p_steps);
  end if;
${notify.block}  if cardinality(v_ids) < jsonb_array_length(p_executions) and p_turn is not null then
    perform pg_notify('sy_work', p_turn);
  end if;
  return true;
end
$admit$`;
}

/**
 * PostgreSQL only: the cluster's two functions stop paying for the dead versions a queue leaves.
 *
 * Every execution leaves dead row versions behind in `executions` and dead entries in its partial
 * indexes until VACUUM removes them, and both functions read those indexes on every call.
 * Measured with the cluster's respond_step load (one API process, two workers) on a server with
 * autovacuum off, as on the machines here, the database's CPU per delivery grew 1.35 -> 1.65 ->
 * 1.97 -> 2.38 ms over four 5 s rounds (with the plans each connection cached on a small table,
 * which db/dialect/prepared-statements.ts now makes again on a schedule; docs/architecture.md
 * "Cached plans on a growing queue"). Three changes here:
 *
 * - `sy_admit_handing_off` (migration 0019) decides first and inserts after, so a handed-off
 *   execution is inserted `running` under its worker's lease, not inserted `pending` and updated
 *   to `running` in the same call: no dead version and no entry in the due index (`run_at`) for
 *   it. What it decides and tells is unchanged.
 * - Its check for older due work reads the oldest due row, ordered by `run_at`, instead of
 *   asking EXISTS (whose subquery the planner strips of its order). The generic plan of the
 *   EXISTS form, made while the table was small, was a sequential scan (the planner expected a
 *   match early; there is usually none), so each hand-off read the whole table: 10,616 scans
 *   read 47.5 million rows in 20 s of load. Ordered, any plan walks the due index.
 * - Both functions plan without bitmap scans and without sequential scans of a table
 *   (`enable_bitmapscan = off`, `enable_seqscan = off`, for the functions' own statements only;
 *   every statement of the two has an index to walk). The running counts read the partial lease
 *   index over its whole range; as a bitmap scan each call visited every dead entry and its heap
 *   page again (4,279 dead entries, 1.15 ms a call), while a plain index scan marks the entries
 *   it finds dead, and later scans step over them (0.03 ms). And a plan made while the table was
 *   small (the functions' plans are generic, made once per connection until something drops
 *   them) chose a sequential scan and a sort for the oldest due row, and kept it as the table grew.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect.name !== 'postgres') return;
  await sql
    .raw(admitHandingOff(`exists (select 1 from pg_stat_activity a where a.application_name = 'sy_worker_' || replace(x.w, '-', ''))`))
    .execute(db);
  await sql`alter function sy_claim_executions(text, text, integer, integer, integer) set enable_bitmapscan = off`.execute(db);
  await sql`alter function sy_claim_executions(text, text, integer, integer, integer) set enable_seqscan = off`.execute(db);
}
