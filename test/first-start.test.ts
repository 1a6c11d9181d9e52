import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

/** Runs the real `switchyard serve` process on an empty data dir and reads what it prints. */
function startServer(dataDir: string): Promise<{ child: ChildProcess; output: () => string; address: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
    env: { ...process.env, SWITCHYARD_DATA_DIR: dataDir, PORT: '0', SWITCHYARD_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += String(chunk)));
  child.stderr!.on('data', (chunk) => (output += String(chunk)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 20_000);
    child.stdout!.on('data', () => {
      const match = /listening on (http:\/\/\S+?);/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, output: () => output, address: match[1]! });
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
  });
}

describe('first start (embedded SQLite)', () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => {
    for (const fn of cleanup.splice(0)) fn();
  });

  it('creates the default Pro workspace and prints one build token that answers /me, only once', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sy-first-'));
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));

    const first = await startServer(dataDir);
    cleanup.push(() => first.child.kill('SIGKILL'));
    const token = /^\s+(sy_[0-9A-Za-z]{40})$/m.exec(first.output())?.[1];
    expect(token, first.output()).toBeDefined();
    const me = await fetch(`${first.address}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    expect(me.headers.get('content-type')).toBe('application/vnd.api+json');
    const body = (await me.json()) as { data: { attributes: { workspace: { slug: string }; token: { scopes: string[] } } } };
    expect(body.data.attributes.workspace.slug).toBe('default');
    expect(body.data.attributes.token.scopes).toEqual(['read', 'build']);
    const created = await fetch(`${first.address}/api/v1/workflows`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.api+json' },
      body: JSON.stringify({ data: { name: 'hello' } }),
    });
    expect(created.status).toBe(201);
    first.child.kill('SIGTERM');
    await new Promise((resolve) => first.child.once('exit', resolve));

    const second = await startServer(dataDir);
    cleanup.push(() => second.child.kill('SIGKILL'));
    expect(second.output()).not.toMatch(/sy_[0-9A-Za-z]{40}/);
    const again = await fetch(`${second.address}/api/v1/workflows`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await again.json()) as { data: { attributes: { name: string } }[] }).data.map((w: { attributes: { name: string } }) => w.attributes.name)).toEqual(['hello']);
  }, 60_000);

  it('refuses to start on a bad setting, naming the variable', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], { env: { ...process.env, PORT: 'eighty' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('PORT: must be a whole number');
  }, 30_000);
});
