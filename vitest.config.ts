import os from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    // Test files run two at a time even on 2 cores (vitest's default there is one): each suite
    // has its own database (test/support/dialects.ts), and the files spend much of their time
    // importing and waiting on PostgreSQL and child processes. The full suite with the
    // PostgreSQL run took 11-12 min one file at a time and 5 min two at a time on this machine.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
