import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * PostgreSQL only, two functions of the engine's cluster mode.
 *
 * `sy_claim_executions`, a worker's whole claim in one call
 * (engine/cluster-store.ts says what it claims and why). As separate statements a claim was
 * seven round trips (begin, the advisory lock, the running counts, two candidate reads, the
 * update, commit) on the way from a delivery's commit to its first step, and both workers made
 * one for every delivery a notification announced; as a function it is one.
 *
 * Each statement of a volatile PL/pgSQL function takes a fresh snapshot under READ COMMITTED, so
 * the counts read after the advisory lock see every claim committed before the lock was granted,
 * as the separate statements did. The answer is one JSON object: `held_back` (runnable executions
 * were left for a limit) and `claimed`, in the order they were chosen, each `{row, takeover, was,
 * due_at, steps}` (`steps`: the step rows of one that was `pending`, else null). Lease times are on the database's clock, due times on the engine's (`p_now`).
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect.name !== 'postgres') return;
  await createClaimFunction(db);
  await createHeldCheck(db);
}

/**
 * `sy_held_check(updated, expected)`: true when every expected execution id is among the updated
 * ones, else it raises SQLSTATE SYL01 with the first missing id as the detail. A worker's group
 * commit sent as one statement (db/transaction-buffer.ts `flushAlone`) updates its executions
 * only where it still holds their lease, in CTEs; this check makes the whole statement fail when
 * one was lost, as the separate statements' row counts did (engine/held-updates.ts).
 */
async function createHeldCheck(db: Kysely<unknown>): Promise<void> {
  await sql`
create or replace function sy_held_check(p_updated text[], p_expected text[])
returns boolean language plpgsql volatile as $check$
declare
  v_missing text;
begin
  select e into v_missing from unnest(p_expected) as e where not (e = any(p_updated)) limit 1;
  if v_missing is not null then
    raise exception 'execution % is no longer held by this worker', v_missing using errcode = 'SYL01', detail = v_missing;
  end if;
  return true;
end
$check$`.execute(db);
}

async function createClaimFunction(db: Kysely<unknown>): Promise<void> {
  await sql`
create or replace function sy_claim_executions(p_owner text, p_now text, p_capacity integer, p_max_running integer, p_lease_ms integer)
returns jsonb language plpgsql volatile as $claim$
declare
  v_db_now text;
  r record;
  v_counts jsonb := '{}';
  v_blocked text[] := '{}';
  v_total integer := 0;
  v_room integer;
  v_scan integer;
  v_n integer;
  v_held_back boolean;
  v_ids text[] := '{}';
  v_takeovers boolean[] := '{}';
  v_was text[] := '{}';
  v_due text[] := '{}';
  v_answer jsonb;
begin
  -- Serializes claims across the cluster, so the limits below cannot be overbooked.
  perform pg_advisory_xact_lock(1398210561);
  -- A claim lost in a server crash is harmless (the executions are claimed again), and every
  -- later commit of the worker flushes the log up to it: no need to wait for the disk here.
  perform set_config('synchronous_commit', 'off', true);
  v_db_now := to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
  for r in
    select workflow_id, min(concurrency_limit) as lim, count(*)::integer as live from executions
    where status = 'running' and lease_expires_at > v_db_now group by workflow_id
  loop
    v_counts := v_counts || jsonb_build_object(r.workflow_id, r.live);
    v_total := v_total + r.live;
    if r.lim is not null and r.live >= r.lim then v_blocked := array_append(v_blocked, r.workflow_id); end if;
  end loop;
  v_room := least(p_capacity, p_max_running - v_total);
  if v_room <= 0 then
    return jsonb_build_object('held_back', p_max_running - v_total <= 0, 'claimed', '[]'::jsonb);
  end if;
  v_held_back := cardinality(v_blocked) > 0 or p_capacity > p_max_running - v_total;
  v_scan := greatest(v_room * 2, 16);
  -- Running executions whose worker stopped renewing its lease first (a takeover), then the due
  -- pending and waiting ones, oldest first (the partial index on run_at serves it).
  for r in
    select id, workflow_id, status, concurrency_limit, run_at from executions
    where status = 'running' and (lease_expires_at is null or lease_expires_at <= v_db_now)
      and (lease_owner is null or lease_owner <> p_owner) and not (workflow_id = any(v_blocked))
    order by lease_expires_at nulls first, id limit v_scan for update skip locked
  loop
    exit when cardinality(v_ids) >= v_room;
    v_n := coalesce((v_counts ->> r.workflow_id)::integer, 0);
    if r.concurrency_limit is not null and v_n >= r.concurrency_limit then v_held_back := true; continue; end if;
    v_counts := v_counts || jsonb_build_object(r.workflow_id, v_n + 1);
    v_ids := array_append(v_ids, r.id); v_takeovers := array_append(v_takeovers, true); v_was := array_append(v_was, r.status); v_due := array_append(v_due, r.run_at);
  end loop;
  if cardinality(v_ids) < v_room then
    for r in
      select id, workflow_id, status, concurrency_limit, run_at from executions
      where status in ('pending', 'waiting') and run_at <= p_now and not (workflow_id = any(v_blocked))
      order by run_at, id limit v_scan for update skip locked
    loop
      exit when cardinality(v_ids) >= v_room;
      v_n := coalesce((v_counts ->> r.workflow_id)::integer, 0);
      if r.concurrency_limit is not null and v_n >= r.concurrency_limit then v_held_back := true; continue; end if;
      v_counts := v_counts || jsonb_build_object(r.workflow_id, v_n + 1);
      v_ids := array_append(v_ids, r.id); v_takeovers := array_append(v_takeovers, false); v_was := array_append(v_was, r.status); v_due := array_append(v_due, r.run_at);
    end loop;
  end if;
  if cardinality(v_ids) = 0 then
    return jsonb_build_object('held_back', v_held_back, 'claimed', '[]'::jsonb);
  end if;
  with claimed as (
    update executions set
      status = 'running',
      lease_owner = p_owner,
      lease_expires_at = to_char((clock_timestamp() + make_interval(secs => p_lease_ms / 1000.0)) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
      run_at = null,
      started_at = coalesce(started_at, p_now),
      updated_at = p_now
    where id = any(v_ids)
    returning executions.*
  )
  select jsonb_build_object('held_back', v_held_back, 'claimed', jsonb_agg(
    jsonb_build_object('row', to_jsonb(claimed.*), 'takeover', chosen.takeover, 'was', chosen.prior, 'due_at', chosen.due_at,
      'steps', case when chosen.prior = 'pending' then (
        select coalesce(jsonb_agg(to_jsonb(s.*) order by s.inserted_at, s.id), '[]'::jsonb) from execution_steps s where s.workflow_execution_id = claimed.id) end)
    order by chosen.ord))
  into v_answer
  from claimed join unnest(v_ids, v_takeovers, v_was, v_due) with ordinality as chosen(id, takeover, prior, due_at, ord) on chosen.id = claimed.id;
  return v_answer;
end
$claim$`.execute(db);
}
