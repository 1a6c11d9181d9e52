import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { StatementText } from '../db/statement-text.js';
import { raisedDetail, transactionBuffer, type GatheredWrites } from '../db/transaction-buffer.js';

type Db = Kysely<Database> | Transaction<Database>;

/** What `sy_endpoints_unchanged` (migration 0021) raises: a webhook or its workflow changed since the endpoint was read. */
const ENDPOINT_CHANGED = 'SYL02';

/**
 * The endpoint a delivery was decided on changed before its execution was committed: nothing was
 * written. The delivery reads the endpoint again and decides anew (deliver-webhook.ts).
 */
export class StaleEndpointError extends Error {
  constructor(readonly webhookId: string) {
    super(`webhook ${webhookId} changed since its endpoint was read`);
    this.name = 'StaleEndpointError';
  }
}

/**
 * In the commit that admits a delivery's execution (PostgreSQL): fails it with
 * `StaleEndpointError` unless the webhook's row and its workflow's are the versions the endpoint
 * was read from (`rowStamp`, store/webhook-repository.ts). In a group commit the checks of all
 * its deliveries are gathered into its statement (one call for all); the group commit retries
 * each writer alone when one fails, so only the stale delivery's fails.
 */
export async function checkEndpointUnchanged(trx: Db, webhookId: string, rowStamp: string): Promise<void> {
  const buffer = transactionBuffer(trx);
  if (buffer) {
    buffer.gatherer('endpoint-checks', () => new EndpointChecks()).add(webhookId, rowStamp);
    return;
  }
  const checks = new EndpointChecks();
  checks.add(webhookId, rowStamp);
  await checks.flush(trx);
}

/** The endpoint checks of one group commit, sent as one call of `sy_endpoints_unchanged`. */
class EndpointChecks implements GatheredWrites {
  readonly table = 'executions' as const;
  readonly checksOnly = true;
  private ids: string[] = [];
  private stamps: string[] = [];

  get empty(): boolean {
    return this.ids.length === 0;
  }

  get parameters(): number {
    return 2;
  }

  add(webhookId: string, rowStamp: string): void {
    this.ids.push(webhookId);
    this.stamps.push(rowStamp);
  }

  async flush(trx: Db): Promise<void> {
    const statement = new StatementText();
    try {
      await trx.executeQuery(statement.compile(`select ${this.call(statement)}`));
    } catch (error) {
      throw this.translate(error) ?? error;
    }
  }

  take(_prefix: string, statement: StatementText): { ctes: string[]; check: string | null } {
    return { ctes: [], check: this.call(statement) };
  }

  /** The check's error (SQLSTATE SYL02, the webhook in its detail) as `StaleEndpointError`. */
  translate(error: unknown): unknown {
    const id = raisedDetail(error, ENDPOINT_CHANGED);
    return id === undefined ? undefined : new StaleEndpointError(id);
  }

  /** The call over everything gathered; forgets it. */
  private call(statement: StatementText): string {
    const text = `sy_endpoints_unchanged(${statement.textList(this.ids)}, ${statement.textList(this.stamps)})`;
    this.ids = [];
    this.stamps = [];
    return text;
  }
}
