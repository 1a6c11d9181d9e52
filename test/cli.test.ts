import { mkdtempSync, rmSync, existsSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { buildProgram } from '../src/cli/program.js';
import { createTestDatabase, describeEachDialect } from './support/dialects.js';

describeEachDialect('switchyard CLI', (dialect) => {
  const cleanup: (() => Promise<void> | void)[] = [];
  /** The environment for one test: a fresh data dir and, on PostgreSQL, a fresh database. */
  const envs = new Map<string, Record<string, string>>();
  const tempDir = async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sy-cli-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const env: Record<string, string> = { SWITCHYARD_DATA_DIR: dir };
    if (dialect === 'postgres') {
      const database = await createTestDatabase('postgres', { migrate: false });
      cleanup.push(() => database.close());
      env.DATABASE_URL = database.url!;
    }
    envs.set(dir, env);
    return dir;
  };
  const run = async (dir: string, args: string[]): Promise<string[]> => {
    const lines: string[] = [];
    const program = buildProgram(
      envs.get(dir)!,
      (line) => lines.push(line),
      () => {},
    );
    program.exitOverride();
    await program.parseAsync(['node', 'switchyard', ...args]);
    return lines;
  };
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  it('migrates, creating the database and the secret key in the data dir', async () => {
    const dir = await tempDir();
    const out = await run(dir, ['migrate']);
    expect(out.join('\n')).toContain('latest migration');
    expect(existsSync(path.join(dir, 'switchyard.db'))).toBe(dialect === 'sqlite');
    expect(statSync(path.join(dir, 'secret.key')).mode & 0o777).toBe(0o600);
  });

  it('creates and lists workspaces, refusing a taken slug', async () => {
    const dir = await tempDir();
    const created = JSON.parse(
      (await run(dir, ['workspace', 'create', '--name', 'Acme', '--slug', 'acme', '--plan', 'pro', '--json']))[0]!,
    );
    expect(created).toMatchObject({ name: 'Acme', slug: 'acme', plan: 'pro' });
    const listed = JSON.parse((await run(dir, ['workspace', 'list', '--json']))[0]!);
    expect(listed.map((w: { slug: string }) => w.slug)).toEqual(['acme']);
    await expect(run(dir, ['workspace', 'create', '--name', 'Again', '--slug', 'acme'])).rejects.toThrow('already exists');
  });

  it('creates a token printing {id, token, scopes, expires_at, workspace}, lists it without the secret, and revokes it', async () => {
    const dir = await tempDir();
    await run(dir, ['workspace', 'create', '--name', 'Acme', '--slug', 'acme', '--plan', 'pro']);
    const created = JSON.parse(
      (await run(dir, ['token', 'create', '--workspace', 'acme', '--scope', 'read', '--expires-in', '30d', '--json']))[0]!,
    );
    expect(Object.keys(created).sort()).toEqual(['expires_at', 'id', 'scopes', 'token', 'workspace']);
    expect(created.token).toMatch(/^sy_[0-9A-Za-z]{40}$/);
    expect(created.scopes).toEqual(['read']);
    expect(created.workspace).toBe('acme');
    const listed = (await run(dir, ['token', 'list', '--json']))[0]!;
    expect(listed).not.toContain(created.token);
    expect(JSON.parse(listed)[0]).toMatchObject({ id: created.id, prefix: created.token.slice(0, 11), revoked_at: null });
    await run(dir, ['token', 'revoke', created.id]);
    expect(JSON.parse((await run(dir, ['token', 'list', '--json']))[0]!)[0].revoked_at).not.toBeNull();
  });

  it('refuses a bad expiry and an unknown workspace', async () => {
    const dir = await tempDir();
    await run(dir, ['workspace', 'create', '--name', 'Acme', '--slug', 'acme']);
    await expect(run(dir, ['token', 'create', '--workspace', 'acme', '--scope', 'build', '--expires-in', 'soon'])).rejects.toThrow(
      'duration',
    );
    await expect(run(dir, ['token', 'create', '--workspace', 'nope', '--scope', 'build'])).rejects.toThrow('not found');
  });
});
