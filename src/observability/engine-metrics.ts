import type { ExecutionStatus, StepStatus } from '../db/schema.js';

/**
 * What the engine reports about its work, for the process's metrics (metrics.ts). Only the engine
 * can count these exactly: a worker runs steps of executions that other processes created, and
 * only the worker that claims an execution sees its claim, its lease and its takeover.
 */
export interface EngineMetrics {
  /** An execution began to run (its first claim; a takeover is not a new start). */
  executionStarted(): void;
  /** An execution reached a terminal status. */
  executionFinished(status: Extract<ExecutionStatus, 'completed' | 'failed' | 'cancelled'>): void;
  /** A step ended (an attempt that will be retried is not reported; its last attempt is). */
  stepFinished(status: Extract<StepStatus, 'completed' | 'failed' | 'skipped'>): void;
  /** An execution was claimed: milliseconds from the commit that made it runnable to its first step's start. */
  claimed(latencyMs: number): void;
  /** A lease this process held ran out before it was renewed (the execution may be taken over). */
  leaseExpired(): void;
  /** This process took over an execution whose previous owner's lease had expired. */
  takeover(): void;
}

/** For tests and tools that run an engine without a metrics endpoint. */
export const noEngineMetrics: EngineMetrics = {
  executionStarted: () => {},
  executionFinished: () => {},
  stepFinished: () => {},
  claimed: () => {},
  leaseExpired: () => {},
  takeover: () => {},
};
