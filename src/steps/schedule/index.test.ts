import { describe, expect, it } from 'vitest';
import { mergeStepConfig, validateStepConfig } from '../validate-step-config.js';
import { scheduleConfigIssues, scheduleStep } from './index.js';

const check = (config: Record<string, unknown>) => {
  const merged = mergeStepConfig(scheduleStep, config);
  const issues = validateStepConfig(scheduleStep, merged);
  return issues.length > 0 ? issues : scheduleConfigIssues(merged);
};

describe('schedule step', () => {
  it('is a trigger with no in port, one out port, and catch_up skip by default', () => {
    expect(scheduleStep.trigger).toBe(true);
    expect(scheduleStep.ports).toEqual({ in: [], out: ['out'] });
    expect(scheduleStep.defaultConfig).toEqual({ catch_up: 'skip' });
  });

  it('accepts 5- and 6-field cron expressions with an IANA time zone, and intervals', () => {
    expect(check({ cron: '30 2 * * *', timezone: 'Europe/Berlin' })).toEqual([]);
    expect(check({ cron: '*/10 * * * * *' })).toEqual([]);
    expect(check({ cron: '0 9 * * 1-5', timezone: 'America/New_York', catch_up: 'run_once' })).toEqual([]);
    expect(check({ interval_ms: 90_000 })).toEqual([]);
    expect(check({ interval_ms: 1_000 })).toEqual([]);
    expect(check({ interval_ms: 31_536_000_000 })).toEqual([]);
  });

  it('requires exactly one of cron and interval_ms', () => {
    expect(check({})).toEqual([{ pointer: '', detail: 'config.cron or config.interval_ms is required.' }]);
    expect(check({ cron: '* * * * *', interval_ms: 60_000 })).toEqual([
      { pointer: '/interval_ms', detail: 'config.interval_ms cannot be given together with config.cron; keep one of them.' },
    ]);
    // The name DESIGN.md fixes; the seconds field of earlier drafts is unknown.
    expect(check({ interval_seconds: 60 })).toEqual([
      { pointer: '/interval_seconds', detail: 'config.interval_seconds is not a known field.' },
    ]);
  });

  it('names the field of a cron expression that is wrong, and refuses 4 or 7 fields', () => {
    expect(check({ cron: '61 * * * *' })).toEqual([
      { pointer: '/cron', detail: 'config.cron is not a valid cron expression: Invalid value for minute: 61.' },
    ]);
    expect(check({ cron: '* * * *' })).toEqual([
      {
        pointer: '/cron',
        detail: 'config.cron must have 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first); "* * * *" has 4.',
      },
    ]);
    expect(check({ cron: '0 0 0 1 1 * 2027' })[0]?.pointer).toBe('/cron');
  });

  it('refuses an unknown time zone, and a time zone with an interval', () => {
    expect(check({ cron: '0 * * * *', timezone: 'Mars/Olympus_Mons' })).toEqual([
      {
        pointer: '/timezone',
        detail: 'config.timezone must be an IANA time zone such as "Europe/Berlin"; "Mars/Olympus_Mons" is not one.',
      },
    ]);
    expect(check({ interval_ms: 60_000, timezone: 'UTC' })).toEqual([
      { pointer: '/timezone', detail: 'config.timezone applies to config.cron only; an interval counts from activation.' },
    ]);
  });

  it('refuses an unknown catch_up and an interval under a second or over a year, in milliseconds', () => {
    expect(check({ interval_ms: 999, catch_up: 'all' })).toEqual([
      { pointer: '/interval_ms', detail: 'config.interval_ms must be at least 1000.' },
      { pointer: '/catch_up', detail: 'config.catch_up must be one of "skip", "run_once".' },
    ]);
    expect(check({ interval_ms: 31_536_000_001 })).toEqual([
      { pointer: '/interval_ms', detail: 'config.interval_ms must be at most 31536000000.' },
    ]);
    expect(check({ interval_ms: 1_500.5 })).toEqual([{ pointer: '/interval_ms', detail: 'config.interval_ms must be an integer.' }]);
  });
});
