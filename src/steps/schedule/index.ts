import { defineStep } from '../define-step.js';
import type { ConfigIssue } from '../describe-config-errors.js';
import { cronProblem, isTimeZone, SCHEDULE_CATCH_UP } from './schedule-times.js';

/**
 * One second, the finest a cron expression says too (6 fields). Every fire is a whole execution
 * (rows and a commit), so sub-second fires would flood a workspace rather than serve it, and a
 * value below a second is most likely seconds written where milliseconds belong (`60`).
 */
export const MIN_INTERVAL_MS = 1_000;
/** A year: a longer interval is more likely a unit mistake than a plan (cron covers the rest). */
export const MAX_INTERVAL_MS = 31_536_000_000;

export const scheduleStep = defineStep({
  checkConfig: (config) => scheduleConfigIssues(config),
  slug: 'schedule',
  name: 'Schedule',
  description: 'Starts the workflow on a cron schedule in a time zone, or every so many milliseconds.',
  docs: `Starts an execution at the times of a cron expression or on a fixed interval, only while
the workflow is active. The next fire time is kept in the database, so restarts and several
processes never fire one time twice. Details: docs/triggers.md, "Schedules".

**Config** (exactly one of \`cron\` and \`interval_ms\`)

- \`cron\`: 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first
  (\`"*/30 * * * * *"\`). Checked when the graph is saved.
- \`timezone\`: the IANA zone the cron times are read in (default \`"UTC"\`), such as
  \`"Europe/Berlin"\`. Daylight saving follows the zone: a time skipped by the spring change runs
  at the first valid time after the gap, a time repeated by the autumn change runs once.
- \`interval_ms\`: every N milliseconds (1000, one second, to 31536000000, a year), counted
  from activation: \`60000\` is every minute.
- \`catch_up\`: what happens to fires missed while the service was down (more than a minute
  late, or a later fire already due): \`skip\` (default) fires nothing for them and waits for
  the next time; \`run_once\` starts one execution for the whole missed window, then goes on.

**Output** (as every platform trigger: \`{payload, event}\`)

\`{payload: {scheduled_at, fired_at, missed}, event: {type: "schedule.fired", schedule_id, node_id,
cron, timezone, interval_ms, catch_up}}\`: \`scheduled_at\` is the fire time the execution stands
for and \`fired_at\` when it was started (RFC 3339 UTC timestamps); \`missed\` is true for the
one catch-up run of \`run_once\`. \`event\` is the schedule as the scheduler fired it.`,
  categories: ['start'],
  icon: 'clock',
  iconColor: '#0891B2',
  trigger: true,
  ports: { in: [], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    // "Exactly one of", the cron syntax and the zone are checked by `scheduleConfigIssues`.
    properties: {
      cron: { type: 'string', minLength: 1, maxLength: 200 },
      timezone: { type: 'string', minLength: 1, maxLength: 64 },
      interval_ms: { type: 'integer', minimum: MIN_INTERVAL_MS, maximum: MAX_INTERVAL_MS },
      catch_up: { enum: [...SCHEDULE_CATCH_UP] },
    },
  },
  defaultConfig: { catch_up: 'skip' },
  outputSchema: {
    type: 'object',
    required: ['payload', 'event'],
    properties: {
      payload: {
        type: 'object',
        required: ['scheduled_at', 'fired_at', 'missed'],
        properties: {
          scheduled_at: { type: 'string' },
          fired_at: { type: 'string' },
          missed: { type: 'boolean' },
        },
      },
      event: {
        type: 'object',
        properties: {
          type: { const: 'schedule.fired' },
          schedule_id: { type: 'string' },
          node_id: { type: 'string' },
          cron: { type: ['string', 'null'] },
          timezone: { type: ['string', 'null'] },
          interval_ms: { type: ['integer', 'null'] },
          catch_up: { enum: [...SCHEDULE_CATCH_UP] },
        },
      },
    },
  },
  sortOrder: 160,
  canvasVisible: true,
});

/** Exactly one of cron and interval_ms; a cron croner parses; a zone the runtime knows. */
export function scheduleConfigIssues(config: Record<string, unknown>): ConfigIssue[] {
  const { cron, timezone, interval_ms: interval } = config;
  if (cron !== undefined && interval !== undefined) {
    return [{ pointer: '/interval_ms', detail: 'config.interval_ms cannot be given together with config.cron; keep one of them.' }];
  }
  if (cron === undefined && interval === undefined) return [{ pointer: '', detail: 'config.cron or config.interval_ms is required.' }];
  const issues: ConfigIssue[] = [];
  if (typeof cron === 'string') {
    const problem = cronProblem(cron);
    if (problem) issues.push({ pointer: '/cron', detail: problem });
  }
  if (timezone !== undefined && interval !== undefined) {
    issues.push({ pointer: '/timezone', detail: 'config.timezone applies to config.cron only; an interval counts from activation.' });
  } else if (typeof timezone === 'string' && !isTimeZone(timezone)) {
    issues.push({
      pointer: '/timezone',
      detail: `config.timezone must be an IANA time zone such as "Europe/Berlin"; "${timezone}" is not one.`,
    });
  }
  return issues;
}
