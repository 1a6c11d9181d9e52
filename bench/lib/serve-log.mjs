// The log file a `switchyard serve` child writes (its stdout and stderr): waiting for the start
// lines, and what the run left in it (size, lines, pino lines by level, errors).
import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

/** A first-start token as the server prints it (`sy_` + 40 base62 characters). */
const TOKEN = /\bsy_[A-Za-z0-9]{40}\b/;
/** serve's own start line (not pino's JSON "Server listening at"), printed once the engine runs. */
const LISTENING = /listening on (https?:\/\/\S+?);/;
const POLL_MS = 25;

/** The plain-text lines (not pino's JSON) of what the child wrote so far. */
function textLines(file) {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !line.startsWith('{'));
}

/**
 * Waits for serve's "listening on" line; resolves with `{address, token}` (token null when the
 * data dir had users already). Rejects when `exited` settles first or after `timeoutMs`.
 */
export async function waitForListening(file, exited, timeoutMs) {
  let gone = null;
  exited.then((end) => (gone = end));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lines = textLines(file);
    const address = lines.map((line) => LISTENING.exec(line)?.[1]).find(Boolean);
    if (address) return { address, token: lines.map((line) => TOKEN.exec(line)?.[0]).find(Boolean) ?? null };
    if (gone) throw new Error(`exited before it listened (code ${gone.code}, signal ${gone.signal}); its log ends:\n${tail(file)}`);
    if (Date.now() > deadline) throw new Error(`printed no "listening on" line within ${timeoutMs / 1000} s; its log ends:\n${tail(file)}`);
    await sleep(POLL_MS);
  }
}

/** The last `count` lines of the file (read from its end: the log can be large). */
export function tail(file, count = 20) {
  const size = fs.statSync(file).size;
  const length = Math.min(size, 64 * 1024);
  const buffer = Buffer.alloc(length);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, buffer, 0, length, size - length);
  } finally {
    fs.closeSync(fd);
  }
  return buffer
    .toString('utf8')
    .split('\n')
    .slice(-count - 1)
    .join('\n');
}

const LEVELS = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/**
 * Reads the whole log once: `{bytes, lines, byLevel: {info: n, ...}, text, errors, errorSamples,
 * afterStart, afterStartSamples}`. An error is a pino line at level error or fatal (a 5xx answer,
 * a failed background job), or a plain line the server wrote about an error (`engine error:
 * ...`; a stack's `at` lines are not counted again). `afterStart` counts the plain (not pino)
 * lines written after serve's "listening on" line: nothing should write there but pino, so the
 * suites print them (e.g. a native library's assertion message on stderr).
 */
export async function logStats(file) {
  const bytes = fs.statSync(file).size;
  const byLevel = {};
  const errorSamples = [];
  let lines = 0;
  let text = 0;
  let errors = 0;
  let started = false;
  let afterStart = 0;
  const afterStartSamples = [];
  const error = (line) => {
    errors += 1;
    if (errorSamples.length < 5) errorSamples.push(line.slice(0, 500));
  };
  const reader = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  for await (const line of reader) {
    lines += 1;
    const level = /^\{"level":(\d+)/.exec(line)?.[1];
    if (level !== undefined) {
      const name = LEVELS[level] ?? level;
      byLevel[name] = (byLevel[name] ?? 0) + 1;
      if (Number(level) >= 50) error(line);
    } else if (line !== '') {
      text += 1;
      if (/^(engine error|error|Error|TypeError|RangeError)\b/.test(line)) error(line);
      if (started) {
        afterStart += 1;
        if (afterStartSamples.length < 5) afterStartSamples.push(line.slice(0, 300));
      }
      if (LISTENING.test(line)) started = true;
    }
  }
  return { bytes, lines, byLevel, text, errors, errorSamples, afterStart, afterStartSamples };
}
