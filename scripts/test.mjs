#!/usr/bin/env node
// The README's test command (`npm test`). SQLite always runs; the PostgreSQL run is added when
// SWITCHYARD_TEST_DATABASE_URL names a server (CI sets it). It says which dialects run, lists
// every test by name under CI (suite names end in [sqlite] or [postgres]), and closes with a
// plain "N passed, N failed, N skipped" line.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const url = process.env.SWITCHYARD_TEST_DATABASE_URL;
if (url) {
  const shown = new URL(url);
  if (shown.password) shown.password = '***';
  console.log(`Dialects: SQLite and PostgreSQL (${shown.toString()})`);
} else {
  console.log('Dialects: SQLite only. Set SWITCHYARD_TEST_DATABASE_URL=postgres://user@host:5432/postgres to add the PostgreSQL run.');
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'sy-test-'));
const report = path.join(dir, 'report.json');
const reporters = [process.env.CI ? '--reporter=verbose' : '--reporter=default', '--reporter=json', `--outputFile.json=${report}`];
const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...reporters, ...process.argv.slice(2)], {
  stdio: 'inherit',
});
child.on('exit', (code, signal) => {
  try {
    const results = JSON.parse(readFileSync(report, 'utf8'));
    const skipped = results.numPendingTests + results.numTodoTests;
    console.log(`\n${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped`);
  } catch {
    console.log('\nno test report was written');
  }
  rmSync(dir, { recursive: true, force: true });
  process.exit(signal ? 1 : (code ?? 1));
});
