import type { ExecutionStatus } from '../db/schema.js';

/** Status predicates in one place (Trigger.dev habit). */
export const TERMINAL_EXECUTION_STATUSES: readonly ExecutionStatus[] = ['completed', 'failed', 'cancelled'];

export function isTerminal(status: ExecutionStatus): boolean {
  return TERMINAL_EXECUTION_STATUSES.includes(status);
}

/** A status a run ends on by itself: completed or failed (a cancel ends it from outside). */
export function isRunEnd(status: ExecutionStatus | undefined): status is 'completed' | 'failed' {
  return status === 'completed' || status === 'failed';
}
