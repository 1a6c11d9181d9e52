import type { Kysely } from 'kysely';
import { CONNECTION_PROVIDERS, type ConnectionProvider, type Database } from '../../db/schema.js';
import { AppError, notFound } from '../../errors/app-error.js';
import type { Clock } from '../../lib/clock.js';
import { isUuid, newId } from '../../lib/ids.js';
import { sealSecret } from '../../lib/secret-box.js';
import { createAllowList, isForbiddenAddress } from '../../lib/ssrf-guard.js';
import { ConnectionRepository, type ConnectionRow } from '../../store/connection-repository.js';
import { readString, rejectUnknown, Violations, type AttributeInput } from '../attribute-input.js';
import type { Actor } from '../workflows/workflow-service.js';

const ATTRIBUTES = ['provider', 'name', 'base_url', 'api_key'] as const;

/**
 * Connections: credentials for model providers. The API key is write-only: sealed with the
 * secret key on write (lib/secret-box.ts), never returned, logged or exported; the resource
 * says `has_api_key`. A base URL is an http(s) URL; requests to it pass the private-address
 * guard at connect time, and an address literal the guard would refuse is refused here already.
 */
export class ConnectionService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly options: { secretKey: string; httpAllow: readonly string[] },
  ) {}

  private connections(actor: Actor): ConnectionRepository {
    return new ConnectionRepository(this.db, actor.workspaceId);
  }

  async get(actor: Actor, id: string): Promise<ConnectionRow> {
    const row = isUuid(id) ? await this.connections(actor).find(id) : undefined;
    if (!row) throw notFound('connection');
    return row;
  }

  private readBaseUrl(input: AttributeInput, violations: Violations): string | null | undefined {
    const raw = readString(input, 'base_url', violations, { max: 2000, nullable: true });
    if (raw === undefined || raw === null || raw === '') return raw === '' ? null : raw;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      violations.add(input.pointer('base_url'), 'base_url must be an absolute http(s) URL, e.g. http://127.0.0.1:11434/v1');
      return undefined;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      violations.add(input.pointer('base_url'), `base_url must be an http or https URL, not ${url.protocol}`);
      return undefined;
    }
    if (url.username || url.password || url.search || url.hash) {
      violations.add(input.pointer('base_url'), 'base_url takes no credentials, query or fragment (the key goes in api_key)');
      return undefined;
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const allow = createAllowList(this.options.httpAllow);
    if (isForbiddenAddress(host) && /^[\d.]+$|:/.test(host) && !allow.allowsHost(host)) {
      violations.add(
        input.pointer('base_url'),
        `${host} is a private, loopback or reserved address; list it in SWITCHYARD_HTTP_ALLOW to use a local model server`,
      );
      return undefined;
    }
    return raw.replace(/\/+$/, '');
  }

  private readApiKey(input: AttributeInput, violations: Violations): string | null | undefined {
    const value = input.values.api_key;
    if (value === undefined || value === null) return value;
    if (typeof value !== 'string' || value.trim() === '' || value.length > 4000) {
      violations.add(input.pointer('api_key'), 'api_key must be a non-empty string of at most 4000 characters, or null to remove it');
      return undefined;
    }
    return value.trim();
  }

  async create(actor: Actor, input: AttributeInput): Promise<ConnectionRow> {
    const violations = new Violations();
    rejectUnknown(input, ATTRIBUTES, violations, (name) => `${name} is not a connection attribute (${ATTRIBUTES.join(', ')})`);
    const provider = input.values.provider;
    if (provider === undefined) violations.add(input.pointer('provider'), 'provider is required');
    else if (!CONNECTION_PROVIDERS.includes(provider as ConnectionProvider))
      violations.add(input.pointer('provider'), `provider must be one of ${CONNECTION_PROVIDERS.join(', ')}`);
    const name = readString(input, 'name', violations, { required: true, max: 200 });
    const baseUrl = this.readBaseUrl(input, violations);
    const apiKey = this.readApiKey(input, violations);
    if (
      provider === 'openai_compatible' &&
      !baseUrl &&
      !violations.items.some((item) => item.source && 'pointer' in item.source && item.source.pointer === input.pointer('base_url'))
    ) {
      violations.add(
        input.pointer('base_url'),
        "base_url is required for openai_compatible connections (the server's API root, e.g. http://127.0.0.1:11434/v1)",
      );
    }
    violations.throwIfAny();
    const now = this.clock.now();
    const row: ConnectionRow = {
      id: newId(),
      workspace_id: actor.workspaceId,
      provider: provider as ConnectionProvider,
      name: name!,
      base_url: baseUrl ?? null,
      api_key_sealed: apiKey ? sealSecret(this.options.secretKey, apiKey) : null,
      has_api_key: Boolean(apiKey),
      created_at: now,
      updated_at: now,
    };
    await this.connections(actor).insert(row);
    return row;
  }

  /** Renames, moves the base URL, or replaces (or with null removes) the key; the provider is fixed. */
  async update(actor: Actor, id: string, input: AttributeInput): Promise<ConnectionRow> {
    const current = await this.get(actor, id);
    const violations = new Violations();
    rejectUnknown(input, ['name', 'base_url', 'api_key'], violations, (name) =>
      name === 'provider'
        ? 'provider cannot change: create another connection'
        : `${name} is not a connection attribute (name, base_url, api_key)`,
    );
    const name = readString(input, 'name', violations, { max: 200 });
    if (name === '') violations.add(input.pointer('name'), 'name must not be empty');
    const baseUrl = this.readBaseUrl(input, violations);
    const apiKey = this.readApiKey(input, violations);
    if (current.provider === 'openai_compatible' && input.values.base_url !== undefined && !baseUrl)
      violations.add(input.pointer('base_url'), 'base_url is required for openai_compatible connections');
    violations.throwIfAny();
    const changes: Partial<ConnectionRow> = { updated_at: this.clock.now() };
    if (name) changes.name = name;
    if (baseUrl !== undefined) changes.base_url = baseUrl;
    if (apiKey !== undefined) {
      changes.api_key_sealed = apiKey === null ? null : sealSecret(this.options.secretKey, apiKey);
      changes.has_api_key = apiKey !== null;
    }
    await this.connections(actor).update(id, changes);
    return { ...current, ...changes };
  }

  /** Refused (409) while a knowledge base or memory uses the connection: they would fail later, far from the cause. */
  async remove(actor: Actor, id: string): Promise<void> {
    await this.get(actor, id);
    const users = await this.connections(actor).users(id);
    if (users.length > 0)
      throw new AppError('invalid_state', `the connection is in use by ${users.join(', ')}; point them elsewhere first`);
    await this.connections(actor).delete(id);
  }
}
