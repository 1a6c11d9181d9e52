import type { FastifyRateLimitOptions, FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { RateLimitCounters } from '../../store/rate-limit-counters.js';

/** Expired counters are deleted this often; between sweeps they only take room (one row a key). */
export const SWEEP_INTERVAL_MS = 60_000;

type Callback = Parameters<FastifyRateLimitStore['incr']>[1];

/**
 * Rate limits counted in PostgreSQL, so every API process sharing the database counts against
 * one limit per token or address (docs/deploy.md). On SQLite one process serves, and the
 * plugin's in-memory store is used instead.
 *
 * `storeFor` gives @fastify/rate-limit a store class (the plugin constructs its store itself)
 * whose keys carry a namespace, so an address limited on the webhooks and an address limited
 * on the API (before a token is known) are counted apart. The plugin's `continueExceeding` and
 * `exponentialBackoff` options are not offered: Switchyard uses neither.
 */
export class SharedRateLimits {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly counters: RateLimitCounters,
    private readonly onError: (error: unknown) => void,
  ) {}

  storeFor(namespace: string): FastifyRateLimitStoreCtor {
    const counters = this.counters;
    class SharedStore implements FastifyRateLimitStore {
      constructor(
        _options: FastifyRateLimitOptions,
        private readonly prefix = `${namespace}:`,
      ) {}

      // The plugin passes the window and the maximum after the callback (its typings omit them).
      incr(key: string, callback: Callback, timeWindow?: number): void {
        counters.count(`${this.prefix}${key}`, timeWindow ?? 60_000).then(
          (counted) => callback(null, { current: counted.hits, ttl: counted.ttlMs }),
          (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
        );
      }

      // A route with its own limit counts apart. The plugin hands the route as `routeInfo` of the
      // merged options, not as its typings say.
      child(options: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
        const route = (options as { routeInfo?: { method: unknown; url: string } }).routeInfo ?? options;
        return new SharedStore({}, `${this.prefix}${String(route.method)}${route.url}:`);
      }
    }
    return SharedStore;
  }

  /** Deletes expired counters every SWEEP_INTERVAL_MS until `stop`; every process does, harmlessly. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async sweep(): Promise<number> {
    try {
      return await this.counters.deleteExpired();
    } catch (error) {
      this.onError(error);
      return 0;
    }
  }
}
