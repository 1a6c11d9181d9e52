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
}

const ENDPOINT_TABLES = ['webhooks', 'workflows'] as const;

/**
 * Looks up the endpoint behind a webhook URL. The answer is cached and served while no webhook
 * or workflow row changed (db/data-stamp.ts: this process's writes are counted; other processes'
 * commits change SQLite's data_version, or are announced by PostgreSQL), so a rotated token, a
 * capture or a deactivation applies to the very next delivery, whichever process took it; the
 * cache saves the join and opening the secret on every delivery.
 */
export class WebhookEndpoints {
  private readonly cache = new FreshCache<ResolvedEndpoint | null>(10_000);

  constructor(
    private readonly db: Kysely<Database>,
    private readonly secretKey: string,
    private readonly stamp: DataStamp | null,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  async find(webhookId: string): Promise<ResolvedEndpoint | null> {
    if (!isUuid(webhookId)) return null;
    let stamp = this.stamp?.(ENDPOINT_TABLES) ?? null;
    if (typeof stamp === 'object' && stamp !== null) stamp = await stamp;
    if (stamp !== null) {
      const cached = this.cache.get(webhookId, stamp);
      if (cached !== undefined) return cached;
    }
    const row = await findEndpoint(this.db, webhookId);
    const resolved = row ? this.resolve(row) : null;
    if (stamp !== null) this.cache.set(webhookId, stamp, resolved);
    return resolved;
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
          this.onError(new Error(`the HMAC secret of webhook ${row.id} cannot be opened with this secret key: ${(error as Error).message}`));
        }
        const verification: Verification = { method: 'hmac', format: row.hmac_format ?? 'plain', secret };
        if (row.hmac_header) verification.header = row.hmac_header;
        return verification;
      }
    }
  }
}
