import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Headers that carry secrets; never logged, not even at `debug`. */
export const REDACTED_HEADERS = ['authorization', 'cookie', 'x-hub-signature-256', 'x-hub-signature', 'stripe-signature', 'x-signature', 'x-twilio-signature', 'x-slack-signature'];

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
    timestamp: pino.stdTimeFunctions.isoTime,
    // Request headers are only logged at `debug`, under `request.headers` (see api/plugins/request-log.ts).
    redact: { paths: REDACTED_HEADERS.map((name) => `request.headers["${name}"]`), censor: '[redacted]' },
  };
  if (settings.destination) return { logger: pino(options, settings.destination), flush: async () => {} };
  if (settings.format === 'pretty') {
    const stream = pretty({ colorize: process.stdout.isTTY === true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
    return { logger: pino(options, stream), flush: async () => {} };
  }
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  return {
    logger: pino(options, destination),
    // Waits for a write in flight too (a synchronous flush would write the rest around it).
    flush: () => new Promise((resolve) => destination.flush(() => resolve())),
  };
}
