import type { FastifyInstance, InjectOptions } from 'fastify';
import { expect } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { HttpLimits } from '../../src/api/plugins/http-limits.js';
import { buildDeps, type Deps } from '../../src/deps.js';
import { manualClock } from '../../src/lib/clock.js';
import type { DatabaseHandle, DialectName } from '../../src/db/dialect/dialect.js';
import { openPostgres } from '../../src/db/dialect/postgres.js';
import type { Clock } from '../../src/lib/clock.js';
import { createTestDatabase, type TestDatabase } from './dialects.js';
import { jsonApiViolations } from './jsonapi-schema.js';
import { watchContract } from './openapi-contract.js';

export const JSONAPI = 'application/vnd.api+json';

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  raw: string;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  contentType?: string | null;
}

export interface TestApp {
  app: FastifyInstance;
  deps: Deps;
  database: TestDatabase;
  clock: ReturnType<typeof manualClock>;
  /** build + read tokens of the Pro workspace, a build token of a free workspace, a build token of another Pro workspace. */
  tokens: { build: string; read: string; free: string; other: string };
  workspaces: { main: string; other: string };
  request(method: InjectOptions['method'], url: string, options?: RequestOptions): Promise<TestResponse>;
  close(): Promise<void>;
}

/**
 * A real app over a fresh database of the given dialect, with a manual clock. Every response
 * carrying the JSON:API media type is validated against the JSON:API 1.0 response schema, so
 * no test can pass with a malformed document.
 */
export interface AppOptions {
  apiRateLimit?: number;
  webhookRateLimit?: number;
  trustProxy?: string[];
  metricsToken?: string;
  httpLimits?: Partial<HttpLimits>;
  /** SWITCHYARD_SLACK_API_URL: a fake Slack (test/support/fake-slack.ts). */
  slackApiUrl?: string;
  /** false: PostgreSQL's exact vector scan even where pgvector is installed. */
  pgvector?: boolean;
  /** Errors of background work (the engine's runs among them), which `serve` logs. */
  onBackgroundError?: (error: unknown) => void;
  /** PostgreSQL: `api` builds an engine that runs no steps (an API process); default `all`. */
  role?: 'all' | 'api';
  /** PostgreSQL: the engine's lease (default 30 s). */
  leaseMs?: number;
}

const TEST_SECRET_KEY = 'test-secret-key-test-secret-key-0123456789';

/** Deps and app over an open database, configured as every test app is. */
async function buildTestApp(
  database: DatabaseHandle,
  clock: Clock,
  options: AppOptions,
): Promise<{ deps: Deps; app: FastifyInstance; violations: string[] }> {
  const deps = await buildDeps(
    {
      databaseUrl: null,
      dataDir: '/nonexistent',
      secretKey: TEST_SECRET_KEY,
      baseUrl: 'http://sy.test',
      httpAllow: ['127.0.0.1', 'localhost'],
      ...(options.slackApiUrl ? { slackApiUrl: options.slackApiUrl } : {}),
      ...(options.role ? { role: options.role } : {}),
      ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
    },
    {
      clock,
      database,
      timers: false,
      ...(options.pgvector === undefined ? {} : { pgvector: options.pgvector }),
      ...(options.onBackgroundError ? { onBackgroundError: options.onBackgroundError } : {}),
    },
  );
  const app = await buildApp({
    ...deps,
    config: {
      apiRateLimit: options.apiRateLimit ?? 0,
      webhookRateLimit: options.webhookRateLimit ?? 0,
      trustProxy: options.trustProxy ?? [],
      baseUrl: 'http://sy.test',
      metricsToken: options.metricsToken ?? null,
    },
    logger: false,
    httpLimits: options.httpLimits,
  });
  return { deps, app, violations: watchContract(app) };
}

export async function createTestApp(dialect: DialectName, options: AppOptions & { sqliteFile?: boolean } = {}): Promise<TestApp> {
  const database = await createTestDatabase(dialect, { migrate: false, sqliteFile: options.sqliteFile });
  const clock = manualClock('2026-11-01T00:00:00.000000Z');
  const { deps, app, violations } = await buildTestApp(database, clock, options);

  const main = await deps.identity.createWorkspace({ name: 'Main', slug: 'main', plan: 'pro', ownerEmail: 'main@example.test' });
  const other = await deps.identity.createWorkspace({ name: 'Other', slug: 'other', plan: 'pro', ownerEmail: 'other@example.test' });
  await deps.identity.createWorkspace({ name: 'Free', slug: 'free', plan: 'free', ownerEmail: 'free@example.test' });
  const tokens = {
    build: (await deps.identity.createToken({ workspaceSlug: 'main', scope: 'build' })).token,
    read: (await deps.identity.createToken({ workspaceSlug: 'main', scope: 'read' })).token,
    free: (await deps.identity.createToken({ workspaceSlug: 'free', scope: 'build' })).token,
    other: (await deps.identity.createToken({ workspaceSlug: 'other', scope: 'build' })).token,
  };

  return {
    app,
    deps,
    database,
    clock,
    tokens,
    workspaces: { main: main.id, other: other.id },
    request: requester(app, tokens.build, violations),
    close: async () => {
      await app.close();
      await deps.close();
      expectContractHeld(violations);
    },
  };
}

/**
 * Another app on the database of `t` (PostgreSQL), over its own deps and connection pool, as a
 * second process would be: same secret key and clock, same tokens. Close it before `t`.
 */
export async function createPeerApp(t: TestApp, options: AppOptions = {}): Promise<Pick<TestApp, 'app' | 'deps' | 'request' | 'close'>> {
  if (t.database.dialectName !== 'postgres') throw new Error('a peer app shares a PostgreSQL database');
  const { deps, app, violations } = await buildTestApp(openPostgres(t.database.url!, { max: 5 }), t.clock, options);
  return {
    app,
    deps,
    request: requester(app, t.tokens.build, violations),
    close: async () => {
      await app.close();
      await deps.close();
      expectContractHeld(violations);
    },
  };
}

/** Fails with what the app answered that its OpenAPI document does not declare (openapi-contract.ts). */
function expectContractHeld(violations: string[]): void {
  const found = violations.splice(0);
  expect(found, 'answers that break the OpenAPI document').toEqual([]);
}

function requester(app: FastifyInstance, defaultToken: string, violations: string[]): TestApp['request'] {
  return async (method, url, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const token = opts.token === undefined ? defaultToken : opts.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      if (opts.contentType !== null) headers['content-type'] = opts.contentType ?? JSONAPI;
    }
    const response = await app.inject({ method, url, headers, ...(payload !== undefined ? { payload } : {}) });
    const type = String(response.headers['content-type'] ?? '');
    const body = response.body && type.includes('json') ? JSON.parse(response.body) : undefined;
    if (type.startsWith(JSONAPI)) expect(jsonApiViolations(body), `${method} ${url} answered an invalid JSON:API document`).toEqual([]);
    expectContractHeld(violations);
    return { status: response.statusCode, headers: response.headers, body, raw: response.body };
  };
}
