import type { ExecutionStatus } from '../db/schema.js';

/** Status predicates in one place (Trigger.dev habit). */
export const TERMINAL_EXECUTION_STATUSES: readonly ExecutionStatus[] = ['completed', 'failed', 'cancelled'];

export function isTerminal(status: ExecutionStatus): boolean {
  return TERMINAL_EXECUTION_STATUSES.includes(status);
}
