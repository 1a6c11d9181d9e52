import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';
import { admitHandingOff } from './0020-lean-queue-scans.js';
import { PRESENCE_CHECK } from './0022-hand-off-presence-locks.js';

/**
 * The most a hand-off notification's payload holds, in bytes (PostgreSQL refuses 8,000 and more):
 * db/notifier.ts MAX_NOTIFY_PAYLOAD's value, spelled out here so this migration's text stays
 * what it was when it ran, whatever the code's limit becomes.
 */
export const HAND_OFF_PAYLOAD_BYTES = 7_900;
/** Ids in one notification naming executions too large to carry (36-character ids: under 6 KB). */
export const HAND_OFF_IDS_PER_NOTIFICATION = 150;

/**
 * Each worker's notifications: its entries in order, as many to a notification as fit; an entry
 * too large for a notification alone is named by its id, whose row the worker reads.
 */
export const NOTIFY_CHUNKS = `  if cardinality(v_ids) > 0 then
    v_head := '{"k":"h","l":' || to_json(v_lease)::text || ',"n":' || to_json(p_now)::text || ',"c":[';
    for r in
      select a.owner, array_agg(a.id order by a.n) as ids, array_agg(p_entries[a.place] order by a.n) as entries
      from unnest(v_ids, v_owners, v_places) with ordinality as a(id, owner, place, n) group by a.owner
    loop
      v_channel := 'sy_answer_' || replace(r.owner, '-', '');
      v_payload := null;
      v_large := '{}';
      for i in 1 .. cardinality(r.ids) loop
        v_entry := r.entries[i];
        if octet_length(v_head) + octet_length(v_entry) + 2 > ${HAND_OFF_PAYLOAD_BYTES} then
          v_large := array_append(v_large, r.ids[i]);
          continue;
        end if;
        if v_payload is not null and octet_length(v_payload) + octet_length(v_entry) + 3 > ${HAND_OFF_PAYLOAD_BYTES} then
          perform pg_notify(v_channel, v_payload || ']}');
          v_payload := null;
        end if;
        v_payload := case when v_payload is null then v_head || v_entry else v_payload || ',' || v_entry end;
      end loop;
      if v_payload is not null then
        perform pg_notify(v_channel, v_payload || ']}');
      end if;
      if cardinality(v_large) > 0 then
        for i in 0 .. (cardinality(v_large) - 1) / ${HAND_OFF_IDS_PER_NOTIFICATION} loop
          perform pg_notify(v_channel, jsonb_build_object('k', 'h', 'i', to_jsonb(v_large[i * ${HAND_OFF_IDS_PER_NOTIFICATION} + 1 : (i + 1) * ${HAND_OFF_IDS_PER_NOTIFICATION}]))::text);
        end loop;
      end if;
    end loop;
  end if;
`;

export const DECLARATIONS = `
  v_head text;
  v_channel text;
  v_entry text;
  v_large text[];`;

/**
 * PostgreSQL only: `sy_admit_handing_off` (migrations 0019-0023) sends a worker its entries in as
 * many notifications as they need, where it named them all by id once together they passed one
 * notification's limit. A light delivery's entry is ~1.5-2.5 KB (its row carries the request),
 * so a commit handing a worker more than three or four of them (a group commit under load: ~16
 * deliveries a commit at 32 connections) sent only ids, and the worker read the rows and their
 * steps back, two more statements for each such hand-off (in the cluster benchmark's throughput
 * load, 0.07 reads of each kind per delivery; the step rows' read cost 0.115 ms a delivery of
 * the database's time). Ids are now sent only for an entry too large for a notification alone
 * (a large request body), at most 150 to a notification, where before one list held them all.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect.name !== 'postgres') return;
  await sql.raw(admitHandingOff(PRESENCE_CHECK, true, { declarations: DECLARATIONS, block: NOTIFY_CHUNKS })).execute(db);
}
