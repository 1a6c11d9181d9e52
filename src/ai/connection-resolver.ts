import type { Kysely, Transaction } from 'kysely';
import type { ConnectionProvider, Database } from '../db/schema.js';
import { isUuid } from '../lib/ids.js';
import { openSecret } from '../lib/secret-box.js';
import { ConnectionRepository } from '../store/connection-repository.js';
import { ProviderError } from './provider-error.js';

/** A connection ready to call: the key opened. Lives only for the call; never logged or stored. */
export interface ResolvedConnection {
  id: string;
  provider: ConnectionProvider;
  /** The provider's API root (`…/v1` for OpenAI-style servers), or null for the provider's default. */
  baseUrl: string | null;
  apiKey: string | null;
}

/** Loads a workspace's connection and opens its sealed key. */
export class ConnectionResolver {
  constructor(
    private readonly db: Kysely<Database> | Transaction<Database>,
    private readonly secretKey: string,
  ) {}

  /** The connection, or a non-retryable ProviderError when it is gone (deleted, or of another workspace). */
  async resolve(workspaceId: string, connectionId: string): Promise<ResolvedConnection> {
    const row = isUuid(connectionId) ? await new ConnectionRepository(this.db, workspaceId).find(connectionId) : undefined;
    if (!row) throw new ProviderError('rejected', `connection ${connectionId} does not exist in this workspace`);
    let apiKey: string | null = null;
    if (row.api_key_sealed) {
      try {
        apiKey = openSecret(this.secretKey, row.api_key_sealed);
      } catch {
        throw new ProviderError(
          'rejected',
          `the API key of connection "${row.name}" cannot be opened: it was sealed under another SWITCHYARD_SECRET_KEY; set the key again`,
        );
      }
    }
    return { id: row.id, provider: row.provider, baseUrl: row.base_url, apiKey };
  }
}
