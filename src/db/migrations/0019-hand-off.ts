import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

const EXECUTION_COLUMNS = `id, workspace_id, workflow_id, workflow_snapshot_id, status, triggered_by_step_id, parent_execution_id, call_depth,
    retry_of_execution_id, user_id, started_at, finished_at, inserted_at, updated_at, context, inputs, output, error, step_count,
    run_at, lease_owner, lease_expires_at, response, concurrency_limit, waiter`;
/** The step rows' columns, as this migration's function inserts them (0020 reuses them). */
export const STEP_COLUMNS = `id, workspace_id, workflow_execution_id, node_id, status, attempt, workflow_step_id, awaiting_workflow_execution_id,
    duration_ms, started_at, finished_at, iter_index, kind, loop_node_id, provider, input, output, error, logs, ports, memory_bytes,
    output_bytes, reductions, resume_at, inserted_at, updated_at`;

/**
 * PostgreSQL only: `sy_admit_handing_off`, an API process's admission that hands the new
 * executions to live workers in the commit that creates them (engine/hand-off.ts says when and
 * why). It inserts the executions (`pending`) and their step rows; keeps, of the workers it is
 * given (`p_workers`, with the capacity each announced), those whose listening connection is up
 * (`pg_stat_activity`: each worker names it `sy_worker_<id>`; a worker killed or cut off drops
 * out at once); takes the claims' advisory lock and counts as a claim does; and, unless older
 * due work waits (a backlog is claimed oldest first, and nothing new may overtake it; work of a
 * workflow at its own limit does not count, as only that workflow's runs ending lets it in),
 * makes as many as the cluster's running limit, each workflow's own and the workers' room
 * allow `running`, each under the lease (`p_lease_ms`, short: the worker lengthens it once it
 * has them) of the worker with the most room at that point. Each worker is told on its own
 * channel: `{"k": "h", "c": [{row, steps}]}`, or `{"k": "h", "i": [ids]}` when that would not
 * fit a notification (the worker reads them). Any left `pending` are announced as a turn
 * (`p_turn` on sy_work), as an admission without a hand-off is.
 *
 * The counts are read after the lock, in statements of their own (a fresh snapshot under READ
 * COMMITTED), so they see every claim committed before it, as the claim function's do
 * (migration 0017); the rows are inserted by the function, not by the statement that calls it,
 * because what a statement's other parts write is not visible to a function it calls.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect.name !== 'postgres') return;
  await sql`
create or replace function sy_admit_handing_off(p_executions jsonb, p_steps jsonb, p_now text, p_workers text[], p_capacities integer[], p_max_running integer, p_lease_ms integer, p_turn text)
returns boolean language plpgsql volatile set plan_cache_mode = force_generic_plan as $admit$
declare
  v_db_now text;
  r record;
  v_new text[];
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
begin
  insert into executions (${sql.raw(EXECUTION_COLUMNS)})
    select ${sql.raw(EXECUTION_COLUMNS)} from jsonb_populate_recordset(null::executions, p_executions);
  if jsonb_array_length(p_steps) > 0 then
    insert into execution_steps (${sql.raw(STEP_COLUMNS)})
      select ${sql.raw(STEP_COLUMNS)} from jsonb_populate_recordset(null::execution_steps, p_steps);
  end if;
  select array_agg(e ->> 'id') into v_new from jsonb_array_elements(p_executions) as e;
  -- Only workers whose listening connection is up (named sy_worker_<id> by each worker) can hear a hand-off.
  select array_agg(x.w order by x.i), array_agg(x.c order by x.i) into v_workers, v_room
  from unnest(p_workers, p_capacities) with ordinality as x(w, c, i)
  where exists (select 1 from pg_stat_activity a where a.application_name = 'sy_worker_' || replace(x.w, '-', ''));
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
    if not exists (
      select 1 from executions where run_at <= p_now and status in ('pending', 'waiting') and not (id = any(v_new))
        and not (workflow_id = any(v_blocked)) limit 1
    ) then
      for r in
        select e ->> 'id' as id, e ->> 'workflow_id' as workflow_id, (e ->> 'concurrency_limit')::integer as lim
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
        v_owners := array_append(v_owners, v_workers[v_best]);
      end loop;
    end if;
  end if;
  if cardinality(v_ids) > 0 then
    update executions e set
      status = 'running',
      lease_owner = x.owner,
      lease_expires_at = to_char((clock_timestamp() + make_interval(secs => p_lease_ms / 1000.0)) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
      run_at = null,
      started_at = coalesce(e.started_at, p_now),
      updated_at = p_now
    from unnest(v_ids, v_owners) as x(id, owner)
    where e.id = x.id;
    -- One notification for each worker, on its own channel.
    for r in
      select e.lease_owner as owner, array_agg(e.id order by e.inserted_at, e.id) as ids,
        jsonb_build_object('k', 'h', 'c', jsonb_agg(jsonb_build_object('row', to_jsonb(e.*), 'steps', (
          select coalesce(jsonb_agg(to_jsonb(s.*) order by s.inserted_at, s.id), '[]'::jsonb) from execution_steps s where s.workflow_execution_id = e.id))
          order by e.inserted_at, e.id))::text as payload
      from executions e where e.id = any(v_ids) group by e.lease_owner
    loop
      v_payload := r.payload;
      if octet_length(v_payload) > 7900 then
        v_payload := jsonb_build_object('k', 'h', 'i', to_jsonb(r.ids))::text;
      end if;
      perform pg_notify('sy_answer_' || replace(r.owner, '-', ''), v_payload);
    end loop;
  end if;
  if cardinality(v_ids) < cardinality(v_new) and p_turn is not null then
    perform pg_notify('sy_work', p_turn);
  end if;
  return true;
end
$admit$`.execute(db);
}
