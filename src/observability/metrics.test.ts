import { describe, expect, it } from 'vitest';
import { parsePrometheusText, sampleValue } from '../../test/support/prometheus-text.js';
import { Metrics } from './metrics.js';

const read = async (metrics: Metrics) => {
  const { samples, invalid } = parsePrometheusText(await metrics.render());
  expect(invalid).toEqual([]);
  return samples;
};

describe('Metrics', () => {
  it('counts what the engine reports, with known statuses at 0 from the start', async () => {
    const metrics = new Metrics();
    let samples = await read(metrics);
    expect(sampleValue(samples, 'switchyard_executions_finished_total', { status: 'failed' })).toBe(0);
    expect(samples.some((s) => s.name === 'switchyard_steps_finished_total' && s.labels.status === 'skipped')).toBe(true);
    metrics.executionStarted();
    metrics.executionStarted();
    metrics.executionFinished('completed');
    metrics.stepFinished('completed');
    metrics.stepFinished('completed');
    metrics.stepFinished('failed');
    metrics.claimed(2.5);
    metrics.claimed(15);
    metrics.leaseExpired();
    metrics.takeover();
    samples = await read(metrics);
    expect(sampleValue(samples, 'switchyard_executions_started_total')).toBe(2);
    expect(sampleValue(samples, 'switchyard_executions_finished_total', { status: 'completed' })).toBe(1);
    expect(sampleValue(samples, 'switchyard_steps_finished_total', { status: 'completed' })).toBe(2);
    expect(sampleValue(samples, 'switchyard_steps_finished_total', { status: 'failed' })).toBe(1);
    expect(sampleValue(samples, 'switchyard_claim_latency_seconds_count')).toBe(2);
    expect(sampleValue(samples, 'switchyard_claim_latency_seconds_bucket', { le: '0.003' })).toBe(1);
    expect(sampleValue(samples, 'switchyard_claim_latency_seconds_bucket', { le: '0.02' })).toBe(2);
    expect(sampleValue(samples, 'switchyard_claim_latency_seconds_sum')).toBeCloseTo(0.0175, 6);
    expect(sampleValue(samples, 'switchyard_lease_expiries_total')).toBe(1);
    expect(sampleValue(samples, 'switchyard_takeovers_total')).toBe(1);
  });

  it('labels requests by method, route pattern and status, and an unmatched one without its URL', async () => {
    const metrics = new Metrics();
    metrics.httpRequest('GET', '/api/v1/workflows/:id', 200, 0.0004);
    metrics.httpRequest('GET', '/api/v1/workflows/:id', 200, 0.003);
    metrics.httpRequest('POST', undefined, 404, 0.001);
    metrics.webhookAnswered(202);
    const samples = await read(metrics);
    expect(
      sampleValue(samples, 'switchyard_http_request_duration_seconds_count', {
        method: 'GET',
        route: '/api/v1/workflows/:id',
        status: '200',
      }),
    ).toBe(2);
    expect(
      sampleValue(samples, 'switchyard_http_request_duration_seconds_bucket', {
        method: 'GET',
        route: '/api/v1/workflows/:id',
        status: '200',
        le: '0.0005',
      }),
    ).toBe(1);
    expect(
      sampleValue(samples, 'switchyard_http_request_duration_seconds_count', { method: 'POST', route: '(unmatched)', status: '404' }),
    ).toBe(1);
    expect(sampleValue(samples, 'switchyard_webhook_answers_total', { status: '202' })).toBe(1);
  });

  it('asks the queue depth at each scrape, and shows none when asking fails', async () => {
    let depth: Record<string, number> | Error = { pending: 3, waiting: 1, running: 2 };
    const errors: unknown[] = [];
    const metrics = new Metrics({
      queueDepth: async () => {
        if (depth instanceof Error) throw depth;
        return depth;
      },
      onError: (error) => errors.push(error),
    });
    let samples = await read(metrics);
    expect(sampleValue(samples, 'switchyard_queue_depth', { status: 'pending' })).toBe(3);
    expect(sampleValue(samples, 'switchyard_queue_depth', { status: 'running' })).toBe(2);
    depth = { pending: 0, waiting: 0, running: 5 };
    samples = await read(metrics);
    expect(sampleValue(samples, 'switchyard_queue_depth', { status: 'pending' })).toBe(0);
    expect(sampleValue(samples, 'switchyard_queue_depth', { status: 'running' })).toBe(5);
    depth = new Error('database unreachable');
    samples = await read(metrics);
    expect(samples.filter((s) => s.name === 'switchyard_queue_depth')).toEqual([]);
    expect(errors).toEqual([depth]);
    // Everything else still answers.
    expect(samples.some((s) => s.name === 'switchyard_executions_started_total')).toBe(true);
  });

  it('includes the default process metrics, prefixed, once per process however many Metrics there are', async () => {
    const first = await read(new Metrics());
    const second = await read(new Metrics());
    for (const samples of [first, second]) {
      expect(samples.some((s) => s.name === 'switchyard_process_cpu_user_seconds_total')).toBe(true);
      expect(samples.some((s) => s.name === 'switchyard_nodejs_heap_size_total_bytes')).toBe(true);
      expect(samples.filter((s) => !s.name.startsWith('switchyard_'))).toEqual([]);
    }
  });
});
