import { expect } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { newId } from '../../src/lib/ids.js';
import type { TestApp } from './test-app.js';

export interface WorkerOptions {
  processId?: string;
  /** Polls and heartbeats; off by default, so a test sees only what notifications do. */
  timers?: boolean;
  heartbeatMs?: number;
  pollMs?: number;
  /** Executions this worker runs at once. */
  maxConcurrent?: number;
}

/** A worker engine on the test app's PostgreSQL database and notifier, started; added to `engines` (the suite stops them). */
export async function startWorker(t: TestApp, engines: Engine[], options: WorkerOptions = {}): Promise<Engine> {
  const engine = new Engine({
    db: t.deps.db,
    clock: t.clock,
    settings: { httpAllow: ['127.0.0.1'] },
    timers: options.timers ?? false,
    maxConcurrent: options.maxConcurrent,
    cluster: {
      processId: options.processId ?? newId(),
      notifier: t.database.notifier!,
      leaseMs: 30_000,
      heartbeatMs: options.heartbeatMs ?? 10_000,
      pollMs: options.pollMs ?? 1_000,
      maxRunning: 64,
      runsSteps: true,
    },
    resolveCallTarget: (request) => t.deps.executions.resolveCallTarget(request),
  });
  engines.push(engine);
  await engine.start();
  return engine;
}

/** Waits (up to 5 s, looking every 10 ms) until the condition holds, and asserts it. */
export async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500 && !(await condition()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(await condition()).toBe(true);
}
