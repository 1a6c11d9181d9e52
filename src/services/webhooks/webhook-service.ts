import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { AppError, notFound } from '../../errors/app-error.js';
import type { Clock } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import { unstorable } from '../../lib/storable-text.js';
import { WebhookRepository, type WebhookRow } from '../../store/webhook-repository.js';
import { WorkflowRepository } from '../../store/workflow-repository.js';
import type { Actor } from '../workflows/workflow-service.js';
import { mintWebhookToken } from './webhook-sync.js';

export interface CaptureView {
  webhook_id: string;
  capturing: boolean;
  payload: unknown;
  shape: unknown;
  captured_at: string | null;
}

/** Webhook endpoint actions of the API: bearer rotation and sample capture, inside the actor's workspace. */
export class WebhookService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly baseUrl: string,
  ) {}

  /** A new bearer token, shown once; the old one stops working on the very next delivery. */
  async rotate(actor: Actor, workflowId: string, nodeId: string): Promise<{ token: string; webhook_id: string; webhook_url: string }> {
    const endpoint = await this.endpoint(actor, workflowId, nodeId);
    if (endpoint.verification !== 'bearer') {
      throw new AppError(
        'validation_failed',
        `webhook node "${nodeId}" verifies with ${endpoint.verification}, not a bearer token: there is no token to rotate`,
        { parameter: 'node_id' },
      );
    }
    const minted = mintWebhookToken();
    await new WebhookRepository(this.db, actor.workspaceId).update(endpoint.id, { token_hash: minted.hash, updated_at: this.clock.now() });
    return { token: minted.token, webhook_id: endpoint.id, webhook_url: this.urlOf(endpoint) };
  }

  /** The next authenticated delivery is recorded instead of run (even while the workflow is inactive). */
  async startCapture(actor: Actor, workflowId: string, nodeId: string): Promise<CaptureView> {
    const endpoint = await this.endpoint(actor, workflowId, nodeId);
    await new WebhookRepository(this.db, actor.workspaceId).update(endpoint.id, { capturing: true, updated_at: this.clock.now() });
    return viewOf({ ...endpoint, capturing: true });
  }

  async capture(actor: Actor, workflowId: string, nodeId: string): Promise<CaptureView> {
    return viewOf(await this.endpoint(actor, workflowId, nodeId));
  }

  private async endpoint(actor: Actor, workflowId: string, nodeId: string): Promise<WebhookRow> {
    const workflow = isUuid(workflowId) ? await new WorkflowRepository(this.db, actor.workspaceId).find(workflowId) : undefined;
    if (!workflow) throw notFound('workflow');
    // A node id PostgreSQL cannot hold (NUL) names no node: the same 404 on both dialects, not its 500.
    const endpoint =
      unstorable(nodeId) === null ? await new WebhookRepository(this.db, actor.workspaceId).findByNode(workflow.id, nodeId) : undefined;
    if (!endpoint) throw new AppError('not_found', `the workflow's canvas has no webhook node "${nodeId}"`);
    return endpoint;
  }

  private urlOf(endpoint: WebhookRow): string {
    return `${this.baseUrl}/webhooks/${endpoint.id}`;
  }
}

function viewOf(endpoint: WebhookRow): CaptureView {
  return {
    webhook_id: endpoint.id,
    capturing: Boolean(endpoint.capturing),
    payload: endpoint.capture_payload === null ? null : JSON.parse(endpoint.capture_payload),
    shape: endpoint.capture_shape === null ? null : JSON.parse(endpoint.capture_shape),
    captured_at: endpoint.captured_at,
  };
}
