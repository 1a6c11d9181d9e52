import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EngineMetrics } from './engine-metrics.js';
import { processMetrics } from './process-metrics.js';

/** Prometheus's text exposition format, as prom-client writes it. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Executions in the queue by status, asked at scrape time (store/queue-depth.ts). */
export type QueueDepthSource = () => Promise<Record<string, number>>;

/** Request durations from sub-millisecond cached reads up to synchronous webhook answers. */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Claim latency around its targets (p50 3 ms, p99 20 ms) and the polling backstop (1 s). */
const CLAIM_BUCKETS = [0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

const FINISHED_EXECUTION_STATUSES = ['completed', 'failed', 'cancelled'] as const satisfies readonly Parameters<
  EngineMetrics['executionFinished']
>[0][];
const FINISHED_STEP_STATUSES = ['completed', 'failed', 'skipped'] as const satisfies readonly Parameters<
  EngineMetrics['stepFinished']
>[0][];

export type PlatformEventOutcome = 'started' | 'duplicate' | 'no_match' | 'unknown_account' | 'ignored';

/** The label of a request that matched no route: the URL itself could carry anything. */
export const UNMATCHED_ROUTE = '(unmatched)';

/**
 * The process's Prometheus metrics (docs/deploy.md lists every series). One per process, built by
 * the composition root and passed explicitly. Every label takes bounded values only: methods,
 * route patterns (never a URL, so no id), statuses.
 */
export class Metrics implements EngineMetrics {
  readonly registry = new Registry();
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly webhookAnswers: Counter<'status'>;
  private readonly executionsStarted: Counter;
  private readonly executionsFinished: Counter<'status'>;
  private readonly stepsFinished: Counter<'status'>;
  private readonly claimLatency: Histogram;
  private readonly leaseExpiries: Counter;
  private readonly takeovers: Counter;
  private readonly platformEvents: Counter<'provider' | 'outcome'>;

  constructor(options: { queueDepth?: QueueDepthSource; onError?: (error: unknown) => void } = {}) {
    const registers = [this.registry];
    this.httpDuration = new Histogram({
      name: 'switchyard_http_request_duration_seconds',
      help: 'HTTP requests answered, by method, route pattern and status: time from arrival to the answer sent',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.webhookAnswers = new Counter({
      name: 'switchyard_webhook_answers_total',
      help: 'Answers to inbound webhook deliveries (/webhooks/...), by status',
      labelNames: ['status'],
      registers,
    });
    this.executionsStarted = new Counter({
      name: 'switchyard_executions_started_total',
      help: 'Executions this process began to run',
      registers,
    });
    this.executionsFinished = new Counter({
      name: 'switchyard_executions_finished_total',
      help: 'Executions this process brought to a terminal status, by status',
      labelNames: ['status'],
      registers,
    });
    this.stepsFinished = new Counter({
      name: 'switchyard_steps_finished_total',
      help: 'Steps this process ran to a final status, by status',
      labelNames: ['status'],
      registers,
    });
    this.claimLatency = new Histogram({
      name: 'switchyard_claim_latency_seconds',
      help: 'Time from the commit that made an execution runnable to the start of its first step in this process',
      buckets: CLAIM_BUCKETS,
      registers,
    });
    this.leaseExpiries = new Counter({
      name: 'switchyard_lease_expiries_total',
      help: 'Leases this process held that ran out before they were renewed',
      registers,
    });
    this.takeovers = new Counter({
      name: 'switchyard_takeovers_total',
      help: 'Executions this process took over after their previous owner’s lease expired',
      registers,
    });
    this.platformEvents = new Counter({
      name: 'switchyard_platform_events_total',
      help: 'Verified deliveries at the platform endpoints (/webhooks/inbound/...), by provider and outcome (started, duplicate, no_match, unknown_account, ignored)',
      labelNames: ['provider', 'outcome'],
      registers,
    });
    // Known statuses start at 0, so a rate over them is defined before their first event.
    for (const status of FINISHED_EXECUTION_STATUSES) this.executionsFinished.inc({ status }, 0);
    for (const status of FINISHED_STEP_STATUSES) this.stepsFinished.inc({ status }, 0);
    const queueDepth = options.queueDepth;
    const onError = options.onError ?? (() => {});
    new Gauge({
      name: 'switchyard_queue_depth',
      help: 'Executions in the queue by status, counted in the database at scrape time (the same for every process)',
      labelNames: ['status'],
      registers: queueDepth ? registers : [],
      async collect() {
        try {
          const depth = await queueDepth!();
          for (const [status, count] of Object.entries(depth)) this.set({ status }, count);
        } catch (error) {
          // No figure rather than a stale one; the scrape still answers with everything else.
          this.reset();
          onError(error);
        }
      },
    });
  }

  /** One answered HTTP request (request-log.ts, where the access line is written). */
  httpRequest(method: string, route: string | undefined, status: number, seconds: number): void {
    this.httpDuration.observe({ method, route: route ?? UNMATCHED_ROUTE, status: String(status) }, seconds);
  }

  webhookAnswered(status: number): void {
    this.webhookAnswers.inc({ status: String(status) });
  }

  /** A verified platform delivery and what became of it (bounded labels: provider and outcome names). */
  platformEvent(provider: string, outcome: PlatformEventOutcome): void {
    this.platformEvents.inc({ provider, outcome });
  }

  executionStarted(): void {
    this.executionsStarted.inc();
  }

  executionFinished(status: Parameters<EngineMetrics['executionFinished']>[0]): void {
    this.executionsFinished.inc({ status });
  }

  stepFinished(status: Parameters<EngineMetrics['stepFinished']>[0]): void {
    this.stepsFinished.inc({ status });
  }

  claimed(latencyMs: number): void {
    this.claimLatency.observe(Math.max(0, latencyMs) / 1000);
  }

  leaseExpired(): void {
    this.leaseExpiries.inc();
  }

  takeover(): void {
    this.takeovers.inc();
  }

  /** The exposition: this process's default metrics, then Switchyard's own. */
  async render(): Promise<string> {
    const [own, process] = await Promise.all([this.registry.metrics(), processMetrics().metrics()]);
    return `${process}\n${own}`;
  }
}
