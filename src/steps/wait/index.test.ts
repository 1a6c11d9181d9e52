import { describe, expect, it } from 'vitest';
import { NonRetriableError } from '../../engine/step-errors.js';
import { validateGraph } from '../../graph/validate-graph.js';
import { mergeStepConfig, validateStepConfig } from '../validate-step-config.js';
import { MAX_WAIT_MS, waitConfigIssues, waitStep, waitUntil } from './index.js';

const check = (config: Record<string, unknown>) => {
  const merged = mergeStepConfig(waitStep, config);
  const issues = validateStepConfig(waitStep, merged);
  return issues.length > 0 ? issues : waitConfigIssues(merged);
};

const NOW = Date.parse('2026-03-01T12:00:00Z');

function failure(run: () => unknown): NonRetriableError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(NonRetriableError);
    return error as NonRetriableError;
  }
  throw new Error('expected waitUntil to throw');
}

describe('wait step', () => {
  it('accepts a duration, a timestamp, or an expression for either', () => {
    expect(check({ duration_ms: 0 })).toEqual([]);
    expect(check({ duration_ms: MAX_WAIT_MS })).toEqual([]);
    expect(check({ duration_ms: '{{ trigger.body.delay }}' })).toEqual([]);
    expect(check({ until: '2026-05-01T09:00:00Z' })).toEqual([]);
    expect(check({ until: '{{ trigger.body.date }}T09:00:00Z' })).toEqual([]);
  });

  it('requires one of duration_ms and until', () => {
    expect(waitStep.defaultConfig).toEqual({});
    expect(check({})).toEqual([{ pointer: '', detail: 'config.duration_ms or config.until is required.' }]);
  });

  it('rejects both at once', () => {
    expect(check({ duration_ms: 1000, until: '2026-05-01T09:00:00Z' })).toEqual([
      { pointer: '/until', detail: 'config.until cannot be given together with config.duration_ms; keep one of them.' },
    ]);
  });

  it('rejects a duration out of range or not whole, and an empty until', () => {
    expect(check({ duration_ms: -1 })).toEqual([{ pointer: '/duration_ms', detail: 'config.duration_ms must be at least 0.' }]);
    expect(check({ duration_ms: MAX_WAIT_MS + 1 })).toEqual([
      { pointer: '/duration_ms', detail: 'config.duration_ms must be at most 31536000000.' },
    ]);
    expect(check({ duration_ms: 1.5 })).toEqual([
      { pointer: '/duration_ms', detail: 'config.duration_ms must be an integer from 0 to 31536000000 or a single {{ … }} expression.' },
    ]);
    expect(check({ until: '' })).toEqual([{ pointer: '/until', detail: 'config.until must not be empty.' }]);
  });
});

describe('wait nodes in a graph', () => {
  it('report a missing or doubled time as a config violation', () => {
    expect(validateGraph({ nodes: [{ id: 'pause', type: 'wait', config: {} }] })).toEqual({
      ok: false,
      violations: [
        { pointer: '/data/graph/nodes/0/config', code: 'invalid_config', detail: 'config.duration_ms or config.until is required.' },
      ],
    });
    expect(validateGraph({ nodes: [{ id: 'pause', type: 'wait', config: { duration_ms: 5 } }] }).ok).toBe(true);
  });
});

describe('waitUntil', () => {
  it('adds a duration to now', () => {
    expect(waitUntil({ duration_ms: 60_000 }, NOW)).toBe(NOW + 60_000);
    expect(waitUntil({ duration_ms: 0 }, NOW)).toBe(NOW);
  });

  it('rounds a fractional duration from an expression up, so it never resumes early', () => {
    expect(waitUntil({ duration_ms: 1.2 }, NOW)).toBe(NOW + 2);
  });

  it('resumes at the given moment, in any offset', () => {
    expect(waitUntil({ until: '2026-03-01T13:00:00Z' }, NOW)).toBe(NOW + 3_600_000);
    expect(waitUntil({ until: '2026-03-01T14:00:00+01:00' }, NOW)).toBe(NOW + 3_600_000);
    expect(waitUntil({ until: '2026-03-01T12:00:00.000500Z' }, NOW)).toBe(NOW + 1);
  });

  it('resumes at once for a moment already past', () => {
    expect(waitUntil({ until: '2020-01-01T00:00:00Z' }, NOW)).toBe(NOW);
  });

  it('fails without retrying when an expression yielded no duration', () => {
    const error = failure(() => waitUntil({ duration_ms: '5 minutes' }, NOW));
    expect(error.code).toBe('invalid_config');
    expect(error.message).toBe('config.duration_ms must be a number of milliseconds from 0 to 31536000000; it is "5 minutes".');
    expect(error.details).toEqual({ field: 'config.duration_ms' });
    expect(failure(() => waitUntil({ duration_ms: null }, NOW)).message).toMatch(/it is null\.$/);
    expect(failure(() => waitUntil({ duration_ms: -5 }, NOW)).code).toBe('invalid_config');
  });

  it('fails without retrying when an expression yielded no timestamp', () => {
    const error = failure(() => waitUntil({ until: 'tomorrow' }, NOW));
    expect(error.message).toBe('config.until must be an RFC 3339 timestamp such as "2026-05-01T09:00:00Z"; it is "tomorrow".');
    expect(failure(() => waitUntil({ until: 1_800_000_000_000 }, NOW)).details).toEqual({ field: 'config.until' });
  });

  it('fails when neither or both are given', () => {
    expect(failure(() => waitUntil({}, NOW)).message).toBe('config.duration_ms or config.until is required.');
    expect(failure(() => waitUntil({ duration_ms: 1, until: '2026-03-01T13:00:00Z' }, NOW)).code).toBe('invalid_config');
  });
});
