import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../src/lib/clock.js';
import { IdentityService } from '../src/services/identity/identity-service.js';
import { StoreService } from '../src/services/stores/store-service.js';
import { StoreRowService } from '../src/services/stores/store-row-service.js';
import { createTestDatabase, describeEachDialect, type TestDatabase } from './support/dialects.js';

/** Runs `switchyard …` from source with `stdin` piped in; resolves with its exit code, stdout and stderr. */
function cli(
  args: string[],
  env: Record<string, string | undefined>,
  stdin = '',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  child.stdin.end(stdin);
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

describeEachDialect('store CLI', (dialect) => {
  let database: TestDatabase;
  let env: Record<string, string | undefined>;
  let tempDir: string | null = null;

  beforeAll(async () => {
    database = await createTestDatabase(dialect, { migrate: true, sqliteFile: true });
    const identity = new IdentityService(database.db, systemClock);
    const workspace = await identity.createWorkspace({ name: 'Cli', slug: 'cli', plan: 'pro', ownerEmail: 'cli@example.test' });
    const stores = new StoreService(database.db, database.dialect, systemClock, { maxRowCap: 1_000_000 }, () => {});
    const actor = { workspaceId: workspace.id, userId: workspace.owner_user_id };
    const store = await stores.create(actor, {
      values: { name: 'Orders', slug: 'orders', schema: { type: 'object', properties: { total: { type: 'integer' } } } },
      pointer: (n) => `/${n}`,
    });
    const rows = new StoreRowService(database.db, database.dialect, systemClock, stores);
    for (let i = 0; i < 3; i += 1) await rows.put(actor, store.id, `order-${i}`, { data: { row: { total: i * 10 } } });
    env = {
      DATABASE_URL: dialect === 'postgres' ? database.url! : undefined,
      SWITCHYARD_DATA_DIR:
        dialect === 'sqlite' ? path.dirname(database.url!) : (tempDir = mkdtempSync(path.join(os.tmpdir(), 'sy-store-cli-'))),
      SWITCHYARD_SECRET_KEY: 'store-cli-test-key-store-cli-test-key-0123',
    };
  }, 60_000);
  afterAll(async () => {
    await database.close();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  });

  it('dumps to stdout with progress on stderr, and restores stdin into a new store, printing the report', async () => {
    const dumped = await cli(['store', 'dump', '--workspace', 'cli', '--slug', 'orders'], env);
    expect(dumped.code, dumped.stderr).toBe(0);
    const lines = dumped.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ format: 'service-store/v1', slug: 'orders' });
    expect(lines.slice(1).map((l) => [l.key, l.row])).toEqual([
      ['order-0', { total: 0 }],
      ['order-1', { total: 10 }],
      ['order-2', { total: 20 }],
    ]);
    expect(dumped.stderr).toContain('dump orders: 4 lines, done');

    const restored = await cli(
      ['store', 'restore', '--workspace', 'cli', '--slug', 'orders-copy', '--name', 'Orders (copy)'],
      env,
      dumped.stdout,
    );
    expect(restored.code, restored.stderr).toBe(0);
    expect(JSON.parse(restored.stdout.trim())).toEqual({
      store: { id: expect.any(String), slug: 'orders-copy', name: 'Orders (copy)', row_count: 3 },
      rows_imported: 3,
      rows_failed: 0,
      failures: [],
      duplicates: [],
    });
    expect(restored.stderr).toContain('restore orders-copy: 4 lines, done');
    const again = await cli(['store', 'dump', '--workspace', 'cli', '--slug', 'orders-copy'], env);
    expect(again.stdout.split('\n').slice(1)).toEqual(dumped.stdout.split('\n').slice(1));

    const csv = await cli(['store', 'dump', '--workspace', 'cli', '--slug', 'orders', '--format', 'csv'], env);
    expect(csv.stdout.split('\r\n')[0]).toBe('key,updated_at,total');

    const taken = await cli(['store', 'restore', '--workspace', 'cli', '--slug', 'orders'], env, dumped.stdout);
    expect(taken.code).not.toBe(0);
    expect(taken.stderr).toContain('slug_taken');
  }, 300_000);
});
