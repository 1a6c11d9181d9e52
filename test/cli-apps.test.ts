import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { buildProgram } from '../src/cli/program.js';
import { createTestDatabase, describeEachDialect } from './support/dialects.js';

describeEachDialect('switchyard app', (dialect) => {
  const cleanup: (() => Promise<void> | void)[] = [];
  const env = async (): Promise<Record<string, string>> => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sy-cli-app-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const vars: Record<string, string> = { SWITCHYARD_DATA_DIR: dir };
    if (dialect === 'postgres') {
      const database = await createTestDatabase('postgres', { migrate: false });
      cleanup.push(() => database.close());
      vars.DATABASE_URL = database.url!;
    }
    return vars;
  };
  const run = async (vars: Record<string, string>, args: string[], stdin = ''): Promise<string[]> => {
    const lines: string[] = [];
    const program = buildProgram(
      vars,
      (line) => lines.push(line),
      () => {},
      async () => stdin,
    );
    program.exitOverride();
    await program.parseAsync(['node', 'switchyard', ...args]);
    return lines;
  };
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  it('sets an app with secrets from flags and stdin, and never prints a secret', async () => {
    const vars = await env();
    const set = await run(
      vars,
      ['app', 'set', 'slack', '--signing-secret', '-', '--client-id', '123.456', '--client-secret', '-', '--json'],
      'sign-from-stdin\nclient-from-stdin\n',
    );
    expect(JSON.parse(set[0]!)).toMatchObject({
      provider: 'slack',
      settings: { client_id: '123.456' },
      secrets_set: ['client_secret', 'signing_secret'],
    });
    await run(vars, ['app', 'set', 'mailgun', '--signing-key', 'key-on-the-command-line']);
    const listed = (await run(vars, ['app', 'list'])).join('\n') + (await run(vars, ['app', 'list', '--json'])).join('\n');
    expect(listed).toContain('slack');
    expect(listed).toContain('mailgun');
    for (const secret of ['sign-from-stdin', 'client-from-stdin', 'key-on-the-command-line']) expect(listed).not.toContain(secret);
    await expect(run(vars, ['app', 'set', 'slack', '--signing-key', 'x'])).rejects.toThrow(
      '--signing-key is not an option of the slack app',
    );
  }, 120_000);

  it('installs an account in one workspace, refuses it for another, and uninstalls it', async () => {
    const vars = await env();
    await run(vars, ['workspace', 'create', '--name', 'Acme', '--slug', 'acme', '--plan', 'pro']);
    await run(vars, ['workspace', 'create', '--name', 'Rival', '--slug', 'rival', '--plan', 'pro']);
    const installed = JSON.parse(
      (
        await run(
          vars,
          [
            'app',
            'install',
            'slack',
            '--workspace',
            'acme',
            '--account-id',
            'T0ACME',
            '--bot-token',
            '-',
            '--bot-user-id',
            'U0BOT',
            '--bot-id',
            'B0BOT',
            '--json',
          ],
          'xoxb-from-stdin\n',
        )
      )[0]!,
    );
    expect(installed).toMatchObject({ provider: 'slack', account_id: 'T0ACME', bot_user_id: 'U0BOT', bot_id: 'B0BOT' });
    expect(JSON.stringify(installed)).not.toContain('xoxb');
    await expect(
      run(vars, [
        'app',
        'install',
        'slack',
        '--workspace',
        'rival',
        '--account-id',
        'T0ACME',
        '--bot-token',
        'xoxb-2',
        '--bot-user-id',
        'U1',
        '--bot-id',
        'B1',
      ]),
    ).rejects.toThrow('installed in another workspace');
    await expect(
      run(vars, ['app', 'install', 'slack', '--workspace', 'acme', '--account-id', 'T0NOBOT', '--bot-token', 'xoxb-3']),
    ).rejects.toThrow('needs the bot user id and the bot id');
    const list = (await run(vars, ['app', 'list'])).join('\n');
    expect(list).toContain('T0ACME');
    expect(list).not.toContain('xoxb');
    expect((await run(vars, ['app', 'uninstall', 'slack', '--account-id', 'T0ACME']))[0]).toContain('uninstalled slack account T0ACME');
    expect(JSON.parse((await run(vars, ['app', 'list', '--json']))[0]!).installations).toEqual([]);
    await expect(run(vars, ['app', 'uninstall', '--id', installed.id])).rejects.toThrow('installation not found');
  }, 120_000);
});
