import { isIP } from 'node:net';
import path from 'node:path';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat } from './lib/logger.js';
import { DEFAULT_SLACK_API_URL } from './platform/slack/slack-web-api.js';

/** What a `serve` process runs: the HTTP API and the engine (`all`), or one of them (PostgreSQL only). */
export const SERVE_ROLES = ['all', 'api', 'worker'] as const;
export type ServeRole = (typeof SERVE_ROLES)[number];

/**
 * Configuration comes from the environment (flags override), is parsed once at start and frozen.
 * A bad value stops the start with the variable's name. README.md documents the same table.
 */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Unset selects the embedded SQLite database in the data dir. */
  databaseUrl: string | null;
  baseUrl: string;
  /** Unset means: read or generate `secret.key` in the data dir at start. */
  secretKey: string | null;
  apiRateLimit: number;
  webhookRateLimit: number;
  trustProxy: string[];
  httpAllow: string[];
  /** Finished executions older than this many days are pruned; 0 keeps them forever. */
  executionRetentionDays: number;
  /** The highest `row_cap` a store may be given. */
  storeMaxRowCap: number;
  logLevel: string;
  /** `json` lines (default), or `pretty` for humans at a terminal. */
  logFormat: LogFormat;
  role: ServeRole;
  /** How long a worker's claim on a running execution lasts without renewal (PostgreSQL). */
  leaseMs: number;
  /** How often a worker renews its leases; well under `leaseMs`. */
  heartbeatMs: number;
  /** How often a worker looks for work when no notification came (the backstop; jittered). */
  pollMs: number;
  /** How long SIGTERM lets the steps in flight finish before their executions are released. */
  shutdownGraceMs: number;
  /** Executions running at once: in the whole cluster on PostgreSQL, in the process on SQLite. */
  maxRunning: number;
  /** Executions one worker process runs at once. */
  workerConcurrency: number;
  /** When set, GET /metrics requires `Authorization: Bearer <it>`; unset, it is open on the listen address. */
  metricsToken: string | null;
  /** Slack's Web API root (chat.postMessage, oauth.v2.access, auth.test); tests point it at a fake. */
  slackApiUrl: string;
  /** Inbound email attachments larger than this are listed (size, SHA-256) without their content. */
  emailAttachmentMaxBytes: number;
}

/** `SWITCHYARD_EMAIL_ATTACHMENT_MAX_BYTES` when unset (256 KiB): larger attachments are listed without content. */
export const DEFAULT_EMAIL_ATTACHMENT_MAX_BYTES = 262_144;

/** `SWITCHYARD_STORE_MAX_ROW_CAP` when unset. */
export const DEFAULT_STORE_MAX_ROW_CAP = 10_000_000;

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function list(env: Env, name: string, check: (item: string) => boolean, what: string): string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return [];
  const items = raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  for (const item of items) if (!check(item)) throw new ConfigError(name, `"${item}" is not ${what}`);
  return items;
}

function isAddressOrCidr(item: string): boolean {
  const [address, bits, ...rest] = item.split('/');
  if (rest.length > 0 || address === undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (bits === undefined) return true;
  return /^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9*](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const port = overrides.port ?? integer(env, 'PORT', 8080, 0, 65535);
  const host = overrides.host ?? (env.HOST?.trim() || '127.0.0.1');
  if (isIP(host) === 0 && !HOSTNAME.test(host)) throw new ConfigError('HOST', `"${host}" is not an address or host name`);

  const dataDir = path.resolve(overrides.dataDir ?? (env.SWITCHYARD_DATA_DIR?.trim() || './data'));

  const databaseUrl = overrides.databaseUrl !== undefined ? overrides.databaseUrl : env.DATABASE_URL?.trim() || null;
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must be a postgres:// or postgresql:// URL (leave it unset for the embedded SQLite database)');
  }

  let baseUrl = overrides.baseUrl ?? (env.SWITCHYARD_BASE_URL?.trim() || `http://${host.includes(':') ? `[${host}]` : host}:${port}`);
  try {
    const url = new URL(baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('protocol');
  } catch {
    throw new ConfigError('SWITCHYARD_BASE_URL', `"${baseUrl}" is not an http(s) URL`);
  }
  baseUrl = baseUrl.replace(/\/+$/, '');

  const secretKey = overrides.secretKey !== undefined ? overrides.secretKey : env.SWITCHYARD_SECRET_KEY?.trim() || null;
  if (secretKey !== null && secretKey.length < 32) {
    throw new ConfigError('SWITCHYARD_SECRET_KEY', 'must be at least 32 characters (unset it to have one generated)');
  }

  const logLevel = overrides.logLevel ?? (env.SWITCHYARD_LOG_LEVEL?.trim() || 'info');
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('SWITCHYARD_LOG_LEVEL', `"${logLevel}" is not one of ${LOG_LEVELS.join(', ')}`);
  }
  const logFormat = overrides.logFormat ?? (env.SWITCHYARD_LOG_FORMAT?.trim() || 'json');
  if (!(LOG_FORMATS as readonly string[]).includes(logFormat)) {
    throw new ConfigError('SWITCHYARD_LOG_FORMAT', `"${logFormat}" is not one of ${LOG_FORMATS.join(', ')}`);
  }

  const role = overrides.role ?? (env.SWITCHYARD_ROLE?.trim() || 'all');
  if (!(SERVE_ROLES as readonly string[]).includes(role))
    throw new ConfigError('SWITCHYARD_ROLE', `"${role}" is not one of ${SERVE_ROLES.join(', ')}`);
  const leaseMs = overrides.leaseMs ?? integer(env, 'SWITCHYARD_LEASE_MS', 30_000, 1_000, 3_600_000);
  // Unset, the heartbeat follows a shortened lease (a third of it, 10 s at most): setting only
  // SWITCHYARD_LEASE_MS=3000 for a fast takeover must not refuse to start over the default 10 s.
  const heartbeatMs =
    overrides.heartbeatMs ??
    integer(env, 'SWITCHYARD_HEARTBEAT_MS', Math.max(100, Math.min(10_000, Math.floor(leaseMs / 3))), 100, 3_600_000);
  if (heartbeatMs * 2 > leaseMs)
    throw new ConfigError(
      'SWITCHYARD_HEARTBEAT_MS',
      `must be at most half of SWITCHYARD_LEASE_MS (${leaseMs}), got ${heartbeatMs}: a lease must survive one missed renewal`,
    );
  const maxRunning = overrides.maxRunning ?? integer(env, 'SWITCHYARD_MAX_RUNNING', 64, 1, 100_000);
  const metricsToken = overrides.metricsToken !== undefined ? overrides.metricsToken : env.SWITCHYARD_METRICS_TOKEN?.trim() || null;
  if (metricsToken !== null && !/^[\x21-\x7e]{16,}$/.test(metricsToken)) {
    throw new ConfigError(
      'SWITCHYARD_METRICS_TOKEN',
      'must be at least 16 printable characters without spaces (unset it to leave /metrics open on the listen address)',
    );
  }

  const slackApiUrl = (overrides.slackApiUrl ?? (env.SWITCHYARD_SLACK_API_URL?.trim() || DEFAULT_SLACK_API_URL)).replace(/\/+$/, '');
  try {
    const url = new URL(slackApiUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('protocol');
  } catch {
    throw new ConfigError('SWITCHYARD_SLACK_API_URL', `"${slackApiUrl}" is not an http(s) URL`);
  }

  return Object.freeze({
    port,
    host,
    dataDir,
    databaseUrl,
    baseUrl,
    secretKey,
    apiRateLimit: overrides.apiRateLimit ?? integer(env, 'SWITCHYARD_API_RATE_LIMIT', 600, 0, 10_000_000),
    webhookRateLimit: overrides.webhookRateLimit ?? integer(env, 'SWITCHYARD_WEBHOOK_RATE_LIMIT', 6000, 0, 10_000_000),
    trustProxy: overrides.trustProxy ?? list(env, 'SWITCHYARD_TRUST_PROXY', isAddressOrCidr, 'an IP address or CIDR'),
    httpAllow:
      overrides.httpAllow ??
      list(env, 'SWITCHYARD_HTTP_ALLOW', (item) => isAddressOrCidr(item) || HOSTNAME.test(item), 'a host name, IP address or CIDR'),
    executionRetentionDays: overrides.executionRetentionDays ?? integer(env, 'SWITCHYARD_EXECUTION_RETENTION_DAYS', 14, 0, 36_500),
    // Row counts are kept in 32-bit integer columns on PostgreSQL, hence the upper bound.
    storeMaxRowCap: overrides.storeMaxRowCap ?? integer(env, 'SWITCHYARD_STORE_MAX_ROW_CAP', DEFAULT_STORE_MAX_ROW_CAP, 1, 2_000_000_000),
    logLevel,
    logFormat: logFormat as LogFormat,
    role: role as ServeRole,
    leaseMs,
    heartbeatMs,
    pollMs: overrides.pollMs ?? integer(env, 'SWITCHYARD_POLL_MS', 1_000, 50, 3_600_000),
    shutdownGraceMs: overrides.shutdownGraceMs ?? integer(env, 'SWITCHYARD_SHUTDOWN_GRACE_MS', 30_000, 0, 3_600_000),
    maxRunning,
    workerConcurrency: overrides.workerConcurrency ?? integer(env, 'SWITCHYARD_WORKER_CONCURRENCY', maxRunning, 1, 100_000),
    metricsToken,
    slackApiUrl,
    emailAttachmentMaxBytes:
      overrides.emailAttachmentMaxBytes ??
      integer(env, 'SWITCHYARD_EMAIL_ATTACHMENT_MAX_BYTES', DEFAULT_EMAIL_ATTACHMENT_MAX_BYTES, 0, 50 * 1024 * 1024),
  });
}
