import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { EngineMetrics } from '../../observability/engine-metrics.js';
import type { AgentResources } from '../../steps/agent/agent-resources.js';
import type { StepSettings, StepStoreAccess } from '../../steps/step-runtime.js';
import type { WriteBatcher } from '../commit/write-batcher.js';
import type { PlanCache } from '../run/plan-cache.js';
import type { ErrorRunPreparer } from '../run/error-run.js';
import type { Answers } from '../answers.js';
import type { DueTimer } from './due-timer.js';
import type { RunSlots } from './run-slots.js';

/**
 * What one engine's runs (flights.ts) and its scheduler (local/ or cluster/) share, built once
 * by engine.ts: the database and clock, the group commit, plans by snapshot, the slots of this
 * process, the waiting callers, the metrics and the timer of the next due wait.
 */
export interface EngineParts {
  db: Kysely<Database>;
  clock: Clock;
  settings: StepSettings;
  stores: StepStoreAccess | undefined;
  agent: AgentResources | undefined;
  batcher: WriteBatcher;
  plans: PlanCache;
  slots: RunSlots;
  answers: Answers;
  metrics: EngineMetrics;
  timer: DueTimer;
  onError: (error: unknown, executionId: string) => void;
  /** What a failed execution's commit writes about its error workflow (run/error-run.ts); absent: nothing. */
  errorRun: ErrorRunPreparer | undefined;
}
