import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

/** Runs the real `switchyard serve` process on an empty data dir and reads what it prints. */
function startServer(
  dataDir: string,
  env: Record<string, string | undefined> = { SWITCHYARD_LOG_LEVEL: 'warn' },
): Promise<{ child: ChildProcess; output: () => string; address: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
    env: {
      ...process.env,
      SWITCHYARD_DATA_DIR: dataDir,
      PORT: '0',
      SWITCHYARD_LOG_LEVEL: undefined,
      SWITCHYARD_LOG_FORMAT: undefined,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += String(chunk)));
  child.stderr!.on('data', (chunk) => (output += String(chunk)));
  return new Promise((resolve, reject) => {
    // A start from source (tsx) takes a few seconds, more while other test files run beside it.
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 60_000);
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
    expect(
      ((await again.json()) as { data: { attributes: { name: string } }[] }).data.map(
        (w: { attributes: { name: string } }) => w.attributes.name,
      ),
    ).toEqual(['hello']);
  }, 150_000);

  it('logs one access line per request at its default level and loses none on a clean exit', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sy-log-'));
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const server = await startServer(dataDir, {});
    cleanup.push(() => server.child.kill('SIGKILL'));
    const token = /^\s+(sy_[0-9A-Za-z]{40})$/m.exec(server.output())![1];
    const sizes: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const answer = await fetch(`${server.address}/api/v1/me`, {
        headers: { authorization: `Bearer ${token}`, 'x-request-id': `log-${i}` },
      });
      expect(answer.status).toBe(200);
      sizes.push((await answer.text()).length);
    }
    server.child.kill('SIGTERM');
    const code = await new Promise((resolve) => server.child.once('exit', resolve));
    expect(code).toBe(0);
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const access = lines.filter((line) => line.msg === 'request');
    // Five short lines stay in the 4 KB buffer until the shutdown flush writes them.
    expect(access.map((line) => line.req_id)).toEqual(['log-0', 'log-1', 'log-2', 'log-3', 'log-4']);
    for (const [i, line] of access.entries()) {
      expect(line).toMatchObject({ level: 30, role: 'all', method: 'GET', route: '/api/v1/me', status: 200 });
      // Headers and body on a real socket.
      expect(line.bytes as number).toBeGreaterThan(sizes[i]!);
    }
    expect(lines.at(-1)).toMatchObject({ msg: 'stopped' });
    expect(server.output()).not.toContain('"headers"');
  }, 150_000);

  it('refuses to start on a bad setting, naming the variable', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      env: { ...process.env, PORT: 'eighty' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('PORT: must be a whole number');
  }, 60_000);
});
