import { isPlainObject } from '../../lib/json.js';
import type { MapResult, NodeContext } from './map-context.js';

/**
 * Schedule Trigger and the old Cron node become the `schedule` trigger (docs/triggers.md:
 * `{cron, timezone, catch_up}` or `{interval_ms, catch_up}`). The workflow's n8n time zone
 * setting goes with a cron; an interval has none. A schedule that one step cannot say (several
 * rules, every few weeks, an expression) becomes a placeholder saying why.
 */
export function mapSchedule(ctx: NodeContext): MapResult {
  const timezone = typeof ctx.workflow.settings.timezone === 'string' ? ctx.workflow.settings.timezone : 'UTC';
  const spec = ctx.node.type.endsWith('.cron') ? cronNodeSpec(ctx) : scheduleTriggerSpec(ctx);
  if ('problem' in spec) return { placeholder: spec.problem };
  return { type: 'schedule', config: 'cron' in spec ? { cron: spec.cron, timezone, catch_up: 'skip' } : { ...spec, catch_up: 'skip' } };
}

type Spec = { cron: string } | { interval_ms: number } | { problem: string };

function scheduleTriggerSpec(ctx: NodeContext): Spec {
  const rule = ctx.param('rule', {});
  const intervals = isPlainObject(rule) && Array.isArray(rule.interval) ? rule.interval : [{}];
  if (intervals.length !== 1) return { problem: `the trigger fires on ${intervals.length} schedules; a schedule step has one` };
  const entry = isPlainObject(intervals[0]) ? intervals[0] : {};
  const field = String(entry.field ?? 'days');
  const hour = num(entry.triggerAtHour, 0);
  const minute = num(entry.triggerAtMinute, 0);
  switch (field) {
    case 'seconds':
      return { interval_ms: num(entry.secondsInterval, 30) * 1000 };
    case 'minutes':
      return { interval_ms: num(entry.minutesInterval, 5) * 60_000 };
    case 'hours':
      return { cron: `${minute} */${num(entry.hoursInterval, 1)} * * *` };
    case 'days':
      return { cron: `${minute} ${hour} */${num(entry.daysInterval, 1)} * *`.replace(' */1 ', ' * ') };
    case 'weeks': {
      const days = Array.isArray(entry.triggerAtDay) && entry.triggerAtDay.length > 0 ? entry.triggerAtDay.join(',') : '0';
      if (num(entry.weeksInterval, 1) !== 1) return { problem: 'the trigger fires every few weeks, which cron cannot say' };
      return { cron: `${minute} ${hour} * * ${days}` };
    }
    case 'months':
      return {
        cron: `${minute} ${hour} ${num(entry.triggerAtDayOfMonth, 1)} */${num(entry.monthsInterval, 1)} *`.replace(' */1 *', ' * *'),
      };
    case 'cronExpression':
      return typeof entry.expression === 'string' && !entry.expression.startsWith('=')
        ? { cron: entry.expression.trim() }
        : { problem: 'the cron expression is built by an expression' };
    default:
      return { problem: `the schedule field "${field}" is not known` };
  }
}

function cronNodeSpec(ctx: NodeContext): Spec {
  const times = ctx.param('triggerTimes', {});
  const items = isPlainObject(times) && Array.isArray(times.item) ? times.item : [];
  if (items.length !== 1) return { problem: `the cron node fires on ${items.length} schedules; a schedule step has one` };
  const item = isPlainObject(items[0]) ? items[0] : {};
  const hour = num(item.hour, 14);
  const minute = num(item.minute, 0);
  switch (String(item.mode ?? 'everyDay')) {
    case 'everyMinute':
      return { cron: '* * * * *' };
    case 'everyHour':
      return { cron: `${minute} * * * *` };
    case 'everyDay':
      return { cron: `${minute} ${hour} * * *` };
    case 'everyWeek':
      return { cron: `${minute} ${hour} * * ${num(item.weekday, 1)}` };
    case 'everyMonth':
      return { cron: `${minute} ${hour} ${num(item.dayOfMonth, 1)} * *` };
    case 'everyX':
      return { interval_ms: num(item.value, 2) * (item.unit === 'minutes' ? 60_000 : 3_600_000) };
    case 'custom':
      return typeof item.cronExpression === 'string'
        ? { cron: item.cronExpression.trim() }
        : { problem: 'the custom cron expression is missing' };
    default:
      return { problem: `the cron mode "${String(item.mode)}" is not known` };
  }
}

function num(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}
