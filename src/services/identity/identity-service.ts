import type { Kysely } from 'kysely';
import { formatMicros, type Clock } from '../../lib/clock.js';
import { AppError } from '../../errors/app-error.js';
import { newId } from '../../lib/ids.js';
import type { Database, TokenScope, WorkspacePlan } from '../../db/schema.js';
import { TOKEN_SCOPES, WORKSPACE_PLANS } from '../../db/schema.js';
import { countUsers, findUserByEmail, insertUser, type UserRow } from '../../store/user-repository.js';
import { findWorkspaceBySlug, insertWorkspace, listWorkspaces, type WorkspaceRow } from '../../store/workspace-repository.js';
import { findToken, insertToken, listTokens, revokeToken } from '../../store/token-repository.js';
import { mintTokenSecret } from './token-format.js';

export const DEFAULT_USER_EMAIL = 'owner@switchyard.local';
export const DEFAULT_TOKEN_LIFETIME_DAYS = 90;
const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

export interface CreatedToken {
  id: string;
  token: string;
  scopes: TokenScope[];
  expires_at: string | null;
  workspace: string;
}

/** `build` includes `read`: a build token may do everything a read token may. */
export function scopesOf(scope: TokenScope): TokenScope[] {
  return scope === 'build' ? ['read', 'build'] : ['read'];
}

/** Parses `90d`, `12h`, `30m`, `never`; null means no expiry. */
export function parseLifetime(value: string): number | null {
  if (value === 'never') return null;
  const match = /^(\d+)([dhm])$/.exec(value);
  if (!match || Number(match[1]) === 0)
    throw new AppError('validation_failed', `expiry "${value}" is not a duration like 90d, 12h, 30m or "never"`);
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[match[2] as 'd' | 'h' | 'm'];
  return Number(match[1]) * unit;
}

export class IdentityService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async ensureUser(email: string, name: string): Promise<UserRow> {
    const existing = await findUserByEmail(this.db, email);
    if (existing) return existing;
    const now = this.clock.now();
    const user = { id: newId(), email, name, created_at: now, updated_at: now };
    await insertUser(this.db, user);
    return user;
  }

  async createWorkspace(input: { name: string; slug: string; plan?: WorkspacePlan; ownerEmail?: string }): Promise<WorkspaceRow> {
    const name = input.name.trim();
    if (name.length === 0 || name.length > 200) throw new AppError('validation_failed', 'workspace name must be 1 to 200 characters');
    if (!SLUG.test(input.slug))
      throw new AppError('validation_failed', `slug "${input.slug}" must be lower-case letters, digits and dashes (at most 64)`);
    const plan = input.plan ?? 'free';
    if (!WORKSPACE_PLANS.includes(plan)) throw new AppError('validation_failed', `plan must be one of ${WORKSPACE_PLANS.join(', ')}`);
    if (await findWorkspaceBySlug(this.db, input.slug))
      throw new AppError('slug_taken', `a workspace with slug "${input.slug}" already exists`);
    const owner = await this.ensureUser(input.ownerEmail ?? DEFAULT_USER_EMAIL, 'Owner');
    const now = this.clock.now();
    const workspace: WorkspaceRow = {
      id: newId(),
      name,
      slug: input.slug,
      plan,
      owner_user_id: owner.id,
      created_at: now,
      updated_at: now,
    };
    await insertWorkspace(this.db, workspace);
    return workspace;
  }

  listWorkspaces(): Promise<WorkspaceRow[]> {
    return listWorkspaces(this.db);
  }

  async createToken(input: { workspaceSlug: string; scope: string; expiresIn?: string; name?: string }): Promise<CreatedToken> {
    const workspace = await findWorkspaceBySlug(this.db, input.workspaceSlug);
    if (!workspace) throw new AppError('not_found', `workspace "${input.workspaceSlug}" not found`);
    if (!TOKEN_SCOPES.includes(input.scope as TokenScope))
      throw new AppError('validation_failed', `scope must be one of ${TOKEN_SCOPES.join(', ')}`);
    const scope = input.scope as TokenScope;
    const lifetime = parseLifetime(input.expiresIn ?? `${DEFAULT_TOKEN_LIFETIME_DAYS}d`);
    const expiresAt = lifetime === null ? null : formatMicros((this.clock.nowMs() + lifetime) * 1000);
    const secret = mintTokenSecret();
    const id = newId();
    await insertToken(this.db, {
      id,
      workspace_id: workspace.id,
      user_id: workspace.owner_user_id,
      name: input.name ?? `${scope} token`,
      token_prefix: secret.prefix,
      token_hash: secret.hash,
      scope,
      expires_at: expiresAt,
      revoked_at: null,
      last_used_at: null,
      created_at: this.clock.now(),
    });
    return { id, token: secret.token, scopes: scopesOf(scope), expires_at: expiresAt, workspace: workspace.slug };
  }

  async listTokens(workspaceSlug?: string) {
    let workspaceId: string | undefined;
    if (workspaceSlug) {
      const workspace = await findWorkspaceBySlug(this.db, workspaceSlug);
      if (!workspace) throw new AppError('not_found', `workspace "${workspaceSlug}" not found`);
      workspaceId = workspace.id;
    }
    const rows = await listTokens(this.db, workspaceId);
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      prefix: row.token_prefix,
      workspace: row.workspace_slug,
      scopes: scopesOf(row.scope),
      expires_at: row.expires_at,
      revoked_at: row.revoked_at,
      last_used_at: row.last_used_at,
      created_at: row.created_at,
    }));
  }

  async revokeToken(id: string): Promise<void> {
    if (!(await findToken(this.db, id))) throw new AppError('not_found', `token ${id} not found`);
    await revokeToken(this.db, id, this.clock.now());
  }

  /**
   * First start on an empty database: a default user, the Pro workspace `default` and one
   * build token, returned so `serve` can print it once. Returns null when any user exists.
   */
  async bootstrap(): Promise<CreatedToken | null> {
    if ((await countUsers(this.db)) > 0) return null;
    await this.createWorkspace({ name: 'Default', slug: 'default', plan: 'pro' });
    return this.createToken({ workspaceSlug: 'default', scope: 'build', name: 'first-start token' });
  }
}
