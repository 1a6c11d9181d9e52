// Counts the commits SQLite makes in this process, whoever asks for them: a COMMIT ending a
// transaction, or a write statement run outside one (autocommit). The engine's own counter
// (`engine.batcher.commits`) sees only the group commits; this one also sees writes that bypass
// the batcher, so the two together show where every commit of an execution comes from.
// better-sqlite3's statements share one native prototype; wrapping its methods before the
// database opens covers every statement. Cost: one function call per statement (well under a
// microsecond), paid equally by every figure.
import { performance } from 'node:perf_hooks';
import SQLite from 'better-sqlite3';

const COMMIT = /^\s*(commit|end)\b/i;

/**
 * Installs the counter (once per process) and returns it: `{ commits, commitMs }`. `commitMs`
 * holds how long the commits took (`count`, `totalMs`, `maxMs`, `over1ms`, `over5ms`): a COMMIT
 * that crosses SQLite's WAL auto-checkpoint threshold (1,000 pages) copies the WAL into the
 * database file and syncs it before it returns, which shows here as a slow commit. Only commits
 * are timed (two clock reads each).
 */
export function countSqliteCommits() {
  const probe = new SQLite(':memory:');
  const prototype = Object.getPrototypeOf(probe.prepare('select 1'));
  probe.close();
  const counter = { commits: 0, commitMs: { count: 0, totalMs: 0, maxMs: 0, over1ms: 0, over5ms: 0 } };
  const timed = (ms) => {
    const t = counter.commitMs;
    t.count += 1;
    t.totalMs += ms;
    if (ms > t.maxMs) t.maxMs = ms;
    if (ms > 1) t.over1ms += 1;
    if (ms > 5) t.over5ms += 1;
  };
  // `iterate` is left alone: it runs lazily, and the app never streams a write.
  for (const name of ['run', 'get', 'all']) {
    const original = prototype[name];
    prototype[name] = function counted(...args) {
      const inTransaction = this.database.inTransaction;
      if (inTransaction ? !COMMIT.test(this.source) : this.readonly) return original.apply(this, args);
      const started = performance.now();
      const result = original.apply(this, args);
      if (inTransaction ? !this.database.inTransaction : true) {
        counter.commits += 1;
        timed(performance.now() - started);
      }
      return result;
    };
  }
  return counter;
}
