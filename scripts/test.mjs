#!/usr/bin/env node
// The README's test command (`npm test`). SQLite always runs; the PostgreSQL run is added when
// SWITCHYARD_TEST_DATABASE_URL names a server (CI sets it). It says which dialects run.
import { spawn } from 'node:child_process';

const url = process.env.SWITCHYARD_TEST_DATABASE_URL;
if (url) {
  const shown = new URL(url);
  if (shown.password) shown.password = '***';
  console.log(`Dialects: SQLite and PostgreSQL (${shown.toString()})`);
} else {
  console.log('Dialects: SQLite only. Set SWITCHYARD_TEST_DATABASE_URL=postgres://user@host:5432/postgres to add the PostgreSQL run.');
}

const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...process.argv.slice(2)], { stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 1)));
