import { parseTimestampMicros, type Clock } from '../../lib/clock.js';
import { AppError } from '../../errors/app-error.js';
import { FreshCache } from '../../lib/fresh-cache.js';
import { safeEqual, sha256Hex } from '../../lib/secrets.js';
import type { TokenScope, WorkspacePlan } from '../../db/schema.js';
import type { DataStamp } from '../../db/data-stamp.js';
import type { TokenIdentity, TokenStore } from '../../store/token-repository.js';
import { scopesOf } from './identity-service.js';
import { isTokenShaped, TOKEN_PREFIX_LENGTH } from './token-format.js';

/** Who is calling: resolved once per request, before any body is parsed. */
export interface AuthContext {
  tokenId: string;
  scopes: TokenScope[];
  expiresAt: string | null;
  workspace: { id: string; name: string; slug: string; plan: WorkspacePlan };
  user: { id: string; name: string; email: string };
}

/** One message for every kind of bad token, so a caller learns nothing about which it was. */
const UNAUTHORIZED_DETAIL = 'a valid API token is required: send "Authorization: Bearer <token>"';

/**
 * `last_used_at` is written at most once a minute per token: a write on every request would
 * cost more than the request itself (the /me benchmark), and minute precision is what a
 * "last used" column is read for.
 */
const TOUCH_INTERVAL_MS = 60_000;
const IDENTITY_TABLES = ['api_tokens', 'workspaces', 'users'] as const;

/** A token's identity with its expiry parsed once (comparing milliseconds beats formatting "now"). */
interface Found {
  identity: TokenIdentity;
  expiresAtMs: number | null;
}

export class Authenticator {
  private readonly touched = new Map<string, number>();
  /** Look-ups by token hash; fresh while no token, workspace or user row changed. */
  private readonly cache = new FreshCache<Found | null>(10_000);

  constructor(
    private readonly tokens: TokenStore,
    private readonly clock: Clock,
    private readonly stamp: DataStamp | null,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  async authenticate(authorization: string | undefined): Promise<AuthContext> {
    const match = authorization ? /^Bearer[ ]+(\S+)\s*$/i.exec(authorization) : null;
    const token = match?.[1];
    if (!token || !isTokenShaped(token)) throw new AppError('unauthorized', UNAUTHORIZED_DETAIL);
    const hash = sha256Hex(token);
    const found = await this.lookUp(token, hash);
    if (!found || found.identity.revoked_at !== null) throw new AppError('unauthorized', UNAUTHORIZED_DETAIL);
    if (found.expiresAtMs !== null && found.expiresAtMs <= this.clock.nowMs()) throw new AppError('unauthorized', UNAUTHORIZED_DETAIL);
    const { identity } = found;
    this.touch(identity.id);
    return {
      tokenId: identity.id,
      scopes: scopesOf(identity.scope),
      expiresAt: identity.expires_at,
      workspace: { id: identity.workspace_id, name: identity.workspace_name, slug: identity.workspace_slug, plan: identity.workspace_plan },
      user: { id: identity.user_id, name: identity.user_name, email: identity.user_email },
    };
  }

  private async lookUp(token: string, hash: string): Promise<Found | null> {
    let stamp = this.stamp?.(IDENTITY_TABLES) ?? null;
    // Awaited only on PostgreSQL: SQLite's cached path stays free of promise turns.
    if (typeof stamp === 'object' && stamp !== null) stamp = await stamp;
    if (stamp !== null) {
      const cached = this.cache.get(hash, stamp);
      if (cached !== undefined) return cached;
    }
    const candidates = await this.tokens.findIdentitiesByPrefix(token.slice(0, TOKEN_PREFIX_LENGTH));
    const identity = candidates.find((candidate) => safeEqual(candidate.token_hash, hash));
    const found = identity
      ? { identity, expiresAtMs: identity.expires_at === null ? null : Math.floor(parseTimestampMicros(identity.expires_at)! / 1000) }
      : null;
    if (stamp !== null) this.cache.set(hash, stamp, found);
    return found;
  }

  private touch(tokenId: string): void {
    const nowMs = this.clock.nowMs();
    const last = this.touched.get(tokenId);
    if (last !== undefined && nowMs - last < TOUCH_INTERVAL_MS) return;
    this.touched.set(tokenId, nowMs);
    this.tokens.touch(tokenId, this.clock.now()).catch(this.onError);
  }
}
