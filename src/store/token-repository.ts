import type { CompiledQuery, Kysely } from 'kysely';
import type { ApiTokensTable, Database, TokenScope, WorkspacePlan } from '../db/schema.js';

export type TokenRow = ApiTokensTable;

/** What authentication needs about a token, its workspace and its user, in one query. */
export interface TokenIdentity {
  id: string;
  token_hash: string;
  scope: TokenScope;
  expires_at: string | null;
  revoked_at: string | null;
  workspace_id: string;
  workspace_name: string;
  workspace_slug: string;
  workspace_plan: WorkspacePlan;
  user_id: string;
  user_name: string;
  user_email: string;
}

export async function insertToken(db: Kysely<Database>, row: TokenRow): Promise<void> {
  await db.insertInto('api_tokens').values(row).execute();
}

function identitiesByPrefix(db: Kysely<Database>, prefix: string) {
  return db
    .selectFrom('api_tokens as t')
    .innerJoin('workspaces as w', 'w.id', 't.workspace_id')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .select([
      't.id',
      't.token_hash',
      't.scope',
      't.expires_at',
      't.revoked_at',
      't.workspace_id',
      'w.name as workspace_name',
      'w.slug as workspace_slug',
      'w.plan as workspace_plan',
      't.user_id',
      'u.name as user_name',
      'u.email as user_email',
    ])
    .where('t.token_prefix', '=', prefix);
}

/**
 * The token look-up on every API request. Its query is compiled once: building and compiling it
 * through the query builder cost ~50 µs a request, more than running it (bench/results).
 */
export class TokenStore {
  private readonly lookup: CompiledQuery<TokenIdentity>;

  constructor(private readonly db: Kysely<Database>) {
    this.lookup = identitiesByPrefix(db, '').compile() as CompiledQuery<TokenIdentity>;
  }

  /** Candidates sharing the non-secret prefix; the caller compares hashes in constant time. */
  async findIdentitiesByPrefix(prefix: string): Promise<TokenIdentity[]> {
    // Listed, not `{ ...this.lookup, parameters }`: on Node 20 an object that spreads and then adds
    // keys survives scavenges, with what it holds (see eslint.config.js). Runs on every API request.
    const { query, queryId, sql } = this.lookup;
    const result = await this.db.executeQuery<TokenIdentity>({ query, queryId, sql, parameters: [prefix] });
    return result.rows;
  }

  touch(id: string, now: string): Promise<void> {
    return touchTokens(this.db, [id], now);
  }
}

export async function listTokens(db: Kysely<Database>, workspaceId?: string): Promise<(TokenRow & { workspace_slug: string })[]> {
  let query = db
    .selectFrom('api_tokens as t')
    .innerJoin('workspaces as w', 'w.id', 't.workspace_id')
    .selectAll('t')
    .select('w.slug as workspace_slug')
    .orderBy('t.created_at')
    .orderBy('t.id');
  if (workspaceId) query = query.where('t.workspace_id', '=', workspaceId);
  return query.execute();
}

export async function revokeToken(db: Kysely<Database>, id: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('api_tokens')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function findToken(db: Kysely<Database>, id: string): Promise<TokenRow | undefined> {
  return db.selectFrom('api_tokens').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function touchTokens(db: Kysely<Database>, ids: string[], now: string): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('api_tokens').set({ last_used_at: now }).where('id', 'in', ids).execute();
}
