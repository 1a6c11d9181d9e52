import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirLockedError, lockDataDir } from './data-dir-lock.js';

describe('lockDataDir', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const tempDir = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sy-lock-'));
    dirs.push(dir);
    return dir;
  };

  it('refuses a second holder while the first holds it, and lets one in once it is released', () => {
    const dir = tempDir();
    const first = lockDataDir(dir);
    expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
    expect(() => lockDataDir(dir)).toThrow(/another switchyard serve is running on this data directory/);
    first.release();
    lockDataDir(dir).release();
  });

  it('is dropped by the kernel when its holder is killed with SIGKILL', async () => {
    const dir = tempDir();
    const holder = fork(path.join(import.meta.dirname, '../../../test/support/data-dir-lock-child.ts'), [dir], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    await new Promise((resolve) => holder.once('message', resolve));
    expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
    lockDataDir(dir).release();
  }, 30_000);
});
