import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Graph, GraphNode, GraphViolation } from '../../graph/graph-types.js';
import { newId } from '../../lib/ids.js';
import { isPlainObject } from '../../lib/json.js';
import { randomBase62, sha256Hex } from '../../lib/secrets.js';
import { sealSecret } from '../../lib/secret-box.js';
import { DEFAULT_MAX_BODY_BYTES } from '../../steps/webhook/index.js';
import { WebhookRepository, type WebhookRow } from '../../store/webhook-repository.js';

/** Webhook bearer tokens: a recognisable prefix (secret scanners, logs) and 238 bits of randomness. */
export const WEBHOOK_TOKEN_PREFIX = 'whk_';

export function mintWebhookToken(): { token: string; hash: string } {
  const token = `${WEBHOOK_TOKEN_PREFIX}${randomBase62(40)}`;
  return { token, hash: sha256Hex(token) };
}

export interface SyncContext {
  trx: Transaction<Database>;
  workspaceId: string;
  workflowId: string;
  secretKey: string;
  baseUrl: string;
  now: string;
  /** Duplicating: the source's endpoints by node id, whose HMAC secrets the copy keeps. */
  copyOf?: Map<string, WebhookRow>;
  /**
   * Importing: an HMAC node may arrive without its secret (secrets never come from a document).
   * Its endpoint refuses every delivery until the secret is set, and activation refuses the
   * workflow; the node is reported in `unsetSecrets` instead of as a violation.
   */
  allowUnsetSecrets?: boolean;
}

export interface SyncResult {
  /** The graph to store: webhook nodes carry their id and URL, and no secret. */
  graph: Graph;
  /** Bearer tokens minted now, by node id: shown once. */
  tokens: Record<string, string>;
  violations: GraphViolation[];
  /** Indexes of HMAC webhook nodes left without a secret (only with `allowUnsetSecrets`). */
  unsetSecrets: number[];
}

/**
 * Brings a workflow's webhook endpoints in line with a graph being saved. A webhook node keeps
 * its endpoint (and so its `webhook_id`, URL and token) across graph edits, keyed by node id;
 * new nodes get new endpoints; endpoints of removed nodes are deleted. HMAC secrets are
 * write-only: sealed into the endpoint row, stripped from the stored graph, and kept when a
 * later save omits them. A bearer token is minted when a node first uses bearer verification.
 */
export async function syncWebhooks(ctx: SyncContext, graph: Graph, pointerBase: string): Promise<SyncResult> {
  const repo = new WebhookRepository(ctx.trx, ctx.workspaceId);
  const existing = new Map((await repo.listForWorkflow(ctx.workflowId)).map((row) => [row.node_id, row]));
  const tokens: Record<string, string> = {};
  const violations: GraphViolation[] = [];
  const unsetSecrets: number[] = [];
  const kept = new Set<string>();

  const nodes: GraphNode[] = [];
  for (const [index, node] of graph.nodes.entries()) {
    if (node.type !== 'webhook') {
      nodes.push(node);
      continue;
    }
    const config = node.config;
    const verification = isPlainObject(config.verification) ? config.verification : { method: 'bearer' };
    const method = verification.method as WebhookRow['verification'];
    const current = existing.get(node.id);
    const id = current?.id ?? newId();
    kept.add(id);

    let secretEncrypted: string | null = null;
    if (method === 'hmac') {
      const secret = verification.secret;
      if (typeof secret === 'string' && secret !== '') secretEncrypted = sealSecret(ctx.secretKey, secret);
      else secretEncrypted = current?.secret_encrypted ?? ctx.copyOf?.get(node.id)?.secret_encrypted ?? null;
      if (secretEncrypted === null && ctx.allowUnsetSecrets) {
        unsetSecrets.push(index);
      } else if (secretEncrypted === null) {
        violations.push({
          pointer: `${pointerBase}/nodes/${index}/config/verification/secret`,
          code: 'invalid_config',
          detail: `Node "${node.id}": an hmac secret is required the first time; it is write-only, so later saves may omit it to keep the stored one.`,
        });
      }
    }
    let tokenHash: string | null = null;
    if (method === 'bearer') {
      if (current?.verification === 'bearer' && current.token_hash) {
        tokenHash = current.token_hash;
      } else {
        const minted = mintWebhookToken();
        tokens[node.id] = minted.token;
        tokenHash = minted.hash;
      }
    }
    const fields = {
      node_id: node.id,
      verification: method,
      hmac_format: method === 'hmac' ? (verification.format as WebhookRow['hmac_format']) : null,
      hmac_header: method === 'hmac' && typeof verification.header === 'string' ? verification.header : null,
      secret_encrypted: secretEncrypted,
      token_hash: tokenHash,
      max_body_bytes: typeof config.max_body_bytes === 'number' ? config.max_body_bytes : DEFAULT_MAX_BODY_BYTES,
      updated_at: ctx.now,
    };
    if (current) await repo.update(id, fields);
    else
      await repo.insert({
        id,
        workspace_id: ctx.workspaceId,
        workflow_id: ctx.workflowId,
        capturing: false,
        capture_payload: null,
        capture_shape: null,
        captured_at: null,
        created_at: ctx.now,
        ...fields,
      });

    const { secret: _secret, ...publicVerification } = verification;
    const { webhook_unauthenticated: _marked, ...rest } = config;
    nodes.push({
      ...node,
      config: {
        ...rest,
        verification: publicVerification,
        webhook_id: id,
        webhook_url: `${ctx.baseUrl}/webhooks/${id}`,
        ...(method === 'none' ? { webhook_unauthenticated: true } : {}),
      },
    });
  }
  await repo.delete([...existing.values()].filter((row) => !kept.has(row.id)).map((row) => row.id));
  return { graph: { ...graph, nodes }, tokens, violations, unsetSecrets };
}
