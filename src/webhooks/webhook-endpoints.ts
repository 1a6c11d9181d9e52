import type { Kysely } from 'kysely';
import type { DataStamp } from '../db/data-stamp.js';
import type { Database } from '../db/schema.js';
import { FreshCache } from '../lib/fresh-cache.js';
import { isUuid } from '../lib/ids.js';
import { openSecret } from '../lib/secret-box.js';
import { findEndpoint, type WebhookEndpoint } from '../store/webhook-repository.js';
import type { Verification } from './verification.js';

/** A webhook endpoint as a delivery needs it, its HMAC secret opened. */
export interface ResolvedEndpoint {
  id: string;
  workspaceId: string;
  workflowId: string;
  nodeId: string;
  /** The workflow is active and runs this snapshot. */
  snapshotId: string | null;
  capturing: boolean;
  maxBodyBytes: number;
  verification: Verification;
  /**
   * PostgreSQL: the versions of the rows this was read from (migration 0021), which the commit
   * admitting a delivery checks (endpoint-checks.ts). Absent on SQLite, where the cache is known
   * fresh before it serves, at no cost.
   */
  rowStamp?: string;
}

const ENDPOINT_TABLES = ['webhooks', 'workflows'] as const;

/**
 * Looks up the endpoint behind a webhook URL. The answer is cached and served while no webhook
 * or workflow row changed (db/data-stamp.ts: this process's writes are counted; other processes'
 * commits change SQLite's data_version, or are announced by PostgreSQL), so a rotated token, a
 * capture or a deactivation applies to the very next delivery, whichever process took it; the
 * cache saves the join and opening the secret on every delivery.
 *
 * On PostgreSQL a delivery is served from the notices heard so far (`find`), without the round
 * trip that makes sure every one committed has arrived: an endpoint that changed a moment ago
 * may be served once more, but the commit admitting its execution checks that its rows are the
 * versions it was read from (`rowStamp`), and a refusal is only ever made on an endpoint that
 * a fresh look found unchanged (`changed`). Either way a delivery is decided on what the database held when it
 * arrived, as on SQLite.
 */
export class WebhookEndpoints {
  private readonly cache = new FreshCache<ResolvedEndpoint | null>(10_000);
  /** Endpoints carry their rows' versions, and may be served before the latest notices arrive. */
  readonly checked: boolean;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly secretKey: string,
    private readonly stamp: DataStamp | null,
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    this.checked = stamp?.heard !== undefined;
  }

  /**
   * The endpoint. `heard` (the default): from the notices heard so far; `fresh`: as of every
   * change announced before the call (PostgreSQL: one round trip more); `database`: read from
   * the database, whatever the cache holds (after a commit found the endpoint's rows changed,
   * maybe by a write the database did not announce), and cached in place of what was there.
   */
  async find(webhookId: string, look: 'heard' | 'fresh' | 'database' = 'heard'): Promise<ResolvedEndpoint | null> {
    if (!isUuid(webhookId)) return null;
    // Taken before the read it guards (data-stamp.ts); a database read needs no round trip for it.
    let stamp =
      this.stamp === null ? null : look !== 'fresh' && this.stamp.heard ? this.stamp.heard(ENDPOINT_TABLES) : this.stamp(ENDPOINT_TABLES);
    if (typeof stamp === 'object' && stamp !== null) stamp = await stamp;
    if (stamp !== null && look !== 'database') {
      const cached = this.cache.get(webhookId, stamp);
      if (cached !== undefined) return cached;
    }
    const row = await findEndpoint(this.db, webhookId, this.checked);
    const resolved = row ? this.resolve(row) : null;
    if (stamp !== null) this.cache.set(webhookId, stamp, resolved);
    return resolved;
  }

  /**
   * Null while what `find` served is still the endpoint (PostgreSQL: looked up fresh, its rows
   * the same versions), else the endpoint as it is now (null: gone). Asked before a delivery is
   * refused, or captured, on it.
   */
  async changed(webhookId: string, served: ResolvedEndpoint): Promise<{ now: ResolvedEndpoint | null } | null> {
    if (!this.checked) return null;
    const now = await this.find(webhookId, 'fresh');
    return now !== null && now.rowStamp === served.rowStamp ? null : { now };
  }

  private resolve(row: WebhookEndpoint): ResolvedEndpoint {
    return {
      id: row.id,
      workspaceId: row.workspace_id,
      workflowId: row.workflow_id,
      nodeId: row.node_id,
      snapshotId: row.workflow_status === 'active' ? row.active_snapshot_id : null,
      capturing: Boolean(row.capturing),
      maxBodyBytes: row.max_body_bytes,
      verification: this.verificationOf(row),
      ...(row.row_stamp === undefined ? {} : { rowStamp: row.row_stamp }),
    };
  }

  /** Anything unusable (no token hash, a secret that does not open) fails closed in verification. */
  private verificationOf(row: WebhookEndpoint): Verification {
    switch (row.verification) {
      case 'none':
        return { method: 'none' };
      case 'bearer':
        return { method: 'bearer', tokenHash: row.token_hash ?? '' };
      case 'hmac': {
        let secret = '';
        try {
          secret = row.secret_encrypted === null ? '' : openSecret(this.secretKey, row.secret_encrypted);
        } catch (error) {
          // Sealed under another SWITCHYARD_SECRET_KEY: every delivery is refused until the secret is set again.
          this.onError(
            new Error(`the HMAC secret of webhook ${row.id} cannot be opened with this secret key: ${(error as Error).message}`),
          );
        }
        const verification: Verification = { method: 'hmac', format: row.hmac_format ?? 'plain', secret };
        if (row.hmac_header) verification.header = row.hmac_header;
        return verification;
      }
    }
  }
}
