/**
 * Time goes through a Clock so tests can skip it. Timestamps are RFC 3339 UTC strings with
 * microseconds (`2026-11-22T01:02:03.456789Z`), which sort lexicographically in time order on
 * both database dialects.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  nowMs(): number;
  /** The current time as a canonical timestamp string. */
  now(): string;
}

/** Microseconds since the epoch, strictly increasing within the process. */
let lastMicros = 0;

function systemMicros(): number {
  const micros = Math.floor((performance.timeOrigin + performance.now()) * 1000);
  lastMicros = micros > lastMicros ? micros : lastMicros + 1;
  return lastMicros;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  now: () => formatMicros(systemMicros()),
};

/** A clock that only moves when told to; for tests of waits, expiry and ordering. */
export function manualClock(startIso = '2026-01-01T00:00:00.000000Z'): Clock & { advance(ms: number): void; set(iso: string): void } {
  let micros = parseTimestampMicros(startIso) ?? 0;
  return {
    nowMs: () => Math.floor(micros / 1000),
    now: () => formatMicros(micros++),
    advance(ms: number) {
      micros += Math.round(ms * 1000);
    },
    set(iso: string) {
      micros = parseTimestampMicros(iso) ?? micros;
    },
  };
}

/** The last millisecond formatted, and its text: a run asks for the time several times within one. */
let formattedMs = Number.NaN;
let formattedPrefix = '';

export function formatMicros(micros: number): string {
  const ms = Math.floor(micros / 1000);
  if (ms !== formattedMs) {
    formattedMs = ms;
    formattedPrefix = new Date(ms).toISOString().slice(0, 23);
  }
  const rest = micros - ms * 1000;
  return `${formattedPrefix}${rest < 10 ? '00' : rest < 100 ? '0' : ''}${rest}Z`;
}

const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})$/;

/** Parses an RFC 3339 timestamp (any offset, any fraction) into microseconds since the epoch. */
export function parseTimestampMicros(value: string): number | null {
  const match = RFC3339.exec(value);
  if (!match) return null;
  const [, date, time, fraction = '', offset] = match;
  const ms = Date.parse(`${date}T${time}${offset === 'z' ? 'Z' : offset}`);
  if (Number.isNaN(ms)) return null;
  const micros = Number((fraction + '000000').slice(0, 6));
  return ms * 1000 + micros;
}

/** Normalises any RFC 3339 timestamp to the canonical stored form, or null when it is not one. */
export function canonicalTimestamp(value: string): string | null {
  const micros = parseTimestampMicros(value);
  return micros === null ? null : formatMicros(micros);
}

export function addMs(iso: string, ms: number): string {
  const micros = parseTimestampMicros(iso);
  if (micros === null) throw new Error(`not a timestamp: ${iso}`);
  return formatMicros(micros + Math.round(ms * 1000));
}
