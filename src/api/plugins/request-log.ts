import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { pino, type Bindings, type ChildLoggerOptions, type Level, type Logger } from 'pino';
import type { Metrics } from '../../observability/metrics.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The workspace the request acts in, once known (API token, webhook endpoint): for the access line. */
    workspaceId: string | null;
    /** The socket's `bytesWritten` when the request arrived: the answer's size is the difference. */
    bytesBefore: number;
  }
}

type LogArguments = [unknown, ...unknown[]];

/**
 * A request's logger that becomes a real pino child only when something logs through it. Fastify
 * gives every request a child logger carrying its id, and ours added another with the workspace:
 * two `child()` calls a request, each rebuilding pino's level methods. On a cached `GET /me`
 * that was 40-70 us of CPU a request (bench/results/profiles), more than the request itself,
 * for lines that are almost never written (the access line is written by the root logger).
 */
export class LazyChildLogger {
  private made: FastifyBaseLogger | null = null;

  constructor(
    private readonly root: Logger,
    private readonly parent: FastifyBaseLogger | LazyChildLogger,
    private readonly bindings: Bindings,
  ) {}

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  fatal(...args: LogArguments): void {
    this.write('fatal', args);
  }

  error(...args: LogArguments): void {
    this.write('error', args);
  }

  warn(...args: LogArguments): void {
    this.write('warn', args);
  }

  info(...args: LogArguments): void {
    this.write('info', args);
  }

  debug(...args: LogArguments): void {
    this.write('debug', args);
  }

  trace(...args: LogArguments): void {
    this.write('trace', args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    if (options && Object.keys(options).length > 0) return this.real().child(bindings, options);
    return new LazyChildLogger(this.root, this, bindings) as unknown as FastifyBaseLogger;
  }

  private real(): FastifyBaseLogger {
    if (this.made === null) {
      // A lazy parent's child() would answer another lazy logger: ask its real one.
      const parent = this.parent instanceof LazyChildLogger ? this.parent.real() : this.parent;
      this.made = parent.child(this.bindings);
    }
    return this.made;
  }

  private write(level: Level, args: LogArguments): void {
    if (this.made === null && !this.root.isLevelEnabled(level)) return;
    (this.real()[level] as (...a: LogArguments) => void)(...args);
  }
}

/**
 * Request logging that production can afford: one access line per request at `info`, written by
 * the root logger when the answer has been sent (method, route pattern, status, duration, request
 * id, workspace, bytes sent), never a header; at `debug` also a line when the request arrives,
 * with its headers (secret-bearing ones redacted, and none at all for webhook deliveries).
 */
export class AccessLog extends LogController {
  constructor(
    private readonly logger: Logger | null,
    private readonly metrics: Metrics | null = null,
  ) {
    super({ requestIdLogLabel: 'req_id' });
  }

  override incomingRequest(request: FastifyRequest): void {
    request.bytesBefore = request.raw.socket?.bytesWritten ?? 0;
    if (this.logger === null || !this.logger.isLevelEnabled('debug')) return;
    // A webhook delivery's headers are not logged at all: a plain-HMAC node names its own
    // signature header, which no fixed redaction list can know.
    const webhook = request.url.startsWith('/webhooks/');
    request.log.debug(
      {
        request: {
          method: request.method,
          url: webhook ? request.routeOptions.url : request.url,
          headers: webhook ? undefined : request.headers,
          remote_address: request.ip,
        },
      },
      'request received',
    );
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // The request metrics ride on this call, which runs once per answer anyway: another
    // onResponse hook would add a hook call to every request (~1 us of prom-client a request).
    if (this.metrics !== null) {
      this.metrics.httpRequest(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
      if (request.url.startsWith('/webhooks/')) this.metrics.webhookAnswered(reply.statusCode);
    }
    const failed = error !== null && error !== undefined;
    if (this.logger === null || !this.logger.isLevelEnabled(failed ? 'error' : 'info')) return;
    // Bytes sent on the connection for this answer, headers included; a socket-less request
    // (app.inject) reports the body's Content-Length.
    const written = request.raw.socket?.bytesWritten;
    // One literal with every key, so every access line has one shape (and one hidden class).
    const line = {
      req_id: request.id,
      method: request.method,
      route: request.routeOptions.url ?? null,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 1000) / 1000,
      workspace_id: request.workspaceId,
      bytes: typeof written === 'number' ? written - request.bytesBefore : Number(reply.getHeader('content-length') ?? 0),
      err: failed ? error : undefined,
    };
    if (failed) this.logger.error(line, 'request failed while answering');
    else this.logger.info(line, 'request');
  }
}

/**
 * The Fastify options that wire a process logger in: the root logger, the access log (which also
 * feeds the request metrics) and lazy request children. Without a logger Fastify's own no-op
 * logger is used, and the access log only counts.
 */
export function requestLogOptions(logger: Logger | false, metrics: Metrics | null = null): Partial<FastifyServerOptions> {
  if (!logger && !metrics) return {};
  // Fastify follows an answer to its end, and so calls the access log, only when it has a
  // logger: metrics without one get a silent logger.
  const root = logger || pino({ level: 'silent' });
  return {
    loggerInstance: root,
    logController: new AccessLog(logger || null, metrics),
    childLoggerFactory: (parent, bindings, options) =>
      options.level !== undefined || options.serializers !== undefined
        ? parent.child(bindings, options)
        : (new LazyChildLogger(root, parent, bindings) as unknown as FastifyBaseLogger),
  };
}
