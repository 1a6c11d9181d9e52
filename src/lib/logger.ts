import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Headers that carry secrets; never logged, not even at `debug`. */
export const REDACTED_HEADERS = [
  'authorization',
  'cookie',
  'x-hub-signature-256',
  'x-hub-signature',
  'stripe-signature',
  'x-signature',
  'x-twilio-signature',
  'x-slack-signature',
];

export interface ProcessLogger {
  logger: Logger;
  /** Resolves when every line logged so far is written out (on shutdown; pino also flushes on `exit`). */
  flush(): Promise<void>;
}

export interface LoggerSettings {
  level: string;
  format: LogFormat;
  /** What every line of the process carries (role, process id). */
  base: Record<string, unknown>;
  /** Where lines go; standard output by default (tests pass a stream). */
  destination?: DestinationStream;
  /** The file descriptor of the buffered JSON destination (standard output, 1, by default). */
  fd?: number;
}

/**
 * The process's logger. JSON lines go to standard output through an asynchronous SonicBoom
 * destination: lines are buffered and written in chunks of at least 4 KB, off the request's
 * path, so an access line costs its formatting and not a write system call (a `write` costs
 * ~5-7 us of CPU on the 2-core VM of bench/results, a tenth of a cached API request). pino
 * flushes the buffer synchronously when the process exits, and `flush()` does on shutdown, so
 * a clean exit loses no line. `pretty` is for humans at a terminal (pino-pretty, synchronous).
 */
export function createLogger(settings: LoggerSettings): ProcessLogger {
  const options = {
    level: settings.level,
    base: settings.base,
    timestamp: isoTimeOncePerMs(),
    // Request headers are only logged at `debug`, under `request.headers` (see api/plugins/request-log.ts).
    redact: { paths: REDACTED_HEADERS.map((name) => `request.headers["${name}"]`), censor: '[redacted]' },
  };
  if (settings.destination) return { logger: pino(options, settings.destination), flush: async () => {} };
  if (settings.format === 'pretty') {
    const stream = pretty({ colorize: process.stdout.isTTY === true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
    return { logger: pino(options, stream), flush: async () => {} };
  }
  const destination = pino.destination({ dest: settings.fd ?? 1, sync: false, minLength: 4096 });
  return {
    logger: pino(options, flushedSoon(destination)),
    // Waits for a write in flight too (a synchronous flush would write the rest around it).
    flush: () => new Promise((resolve) => destination.flush(() => resolve())),
  };
}

/**
 * pino's ISO timestamp, formatted once per millisecond: under load ten or more lines share a
 * millisecond, and `toISOString` was ~1.3% of a cached `GET /me` (bench/results/profiles).
 */
function isoTimeOncePerMs(): () => string {
  let at = -1;
  let formatted = '';
  return () => {
    const now = Date.now();
    if (now !== at) {
      at = now;
      formatted = `,"time":"${new Date(now).toISOString()}"`;
    }
    return formatted;
  };
}

/** How long a line may wait in the buffer when fewer than 4 KB follow it (a quiet server). */
export const LOG_FLUSH_DELAY_MS = 100;

/**
 * The buffered destination, flushed at most LOG_FLUSH_DELAY_MS after a line is written: under
 * load the 4 KB threshold writes long before that, and a quiet server's last lines (one request,
 * a start-up error) still show at once instead of waiting for 4 KB more. One timer at a time.
 *
 * The flush passes no callback: with one, SonicBoom fsyncs the file and registers a `drain` and
 * an `error` listener that only a completed write removes, so a flush every 100 ms under steady
 * load piled listeners up (MaxListenersExceededWarning) and cost an fsync each time. A write in
 * flight when the timer fires leaves what follows it buffered when that is under 4 KB: the
 * `drain` it emits once done arms the timer again.
 */
function flushedSoon(
  destination: ReturnType<typeof pino.destination>,
): DestinationStream & { flushSync(): void; flush(cb?: (error?: Error) => void): void } {
  let timer: NodeJS.Timeout | null = null;
  // What is buffered and not yet handed to a write (SonicBoom 4 keeps it in `_len`; were it gone,
  // every flush would go ahead, as before). An empty buffer is never flushed: flushing one writes
  // an empty chunk, whose `drain` would arm the timer again, for ever.
  const state = destination as unknown as { destroyed: boolean; _len?: number };
  const buffered = () => state._len === undefined || state._len > 0;
  const flushNow = () => {
    timer = null;
    // A destination already closed (the process is ending) has nothing left to flush.
    if (state.destroyed || !buffered()) return;
    destination.flush();
  };
  const arm = () => {
    if (timer !== null) return;
    timer = setTimeout(flushNow, LOG_FLUSH_DELAY_MS);
    timer.unref();
  };
  destination.on('drain', () => {
    if (buffered()) arm();
  });
  return {
    write(line: string) {
      destination.write(line);
      arm();
    },
    flush: (cb) => destination.flush(cb),
    flushSync: () => destination.flushSync(),
  };
}
