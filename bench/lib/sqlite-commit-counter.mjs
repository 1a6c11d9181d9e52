// Counts the commits SQLite makes in this process, whoever asks for them: a COMMIT ending a
// transaction, or a write statement run outside one (autocommit). The engine's own counter
// (`engine.batcher.commits`) sees only the group commits; this one also sees writes that bypass
// the batcher, so the two together show where every commit of an execution comes from.
// better-sqlite3's statements share one native prototype; wrapping its methods before the
// database opens covers every statement. Cost: one function call per statement (well under a
// microsecond), paid equally by every figure.
import SQLite from 'better-sqlite3';

const COMMIT = /^\s*(commit|end)\b/i;

/** Installs the counter (once per process) and returns it: `{ commits }`. */
export function countSqliteCommits() {
  const probe = new SQLite(':memory:');
  const prototype = Object.getPrototypeOf(probe.prepare('select 1'));
  probe.close();
  const counter = { commits: 0 };
  // `iterate` is left alone: it runs lazily, and the app never streams a write.
  for (const name of ['run', 'get', 'all']) {
    const original = prototype[name];
    prototype[name] = function counted(...args) {
      const inTransaction = this.database.inTransaction;
      const result = original.apply(this, args);
      if (inTransaction ? !this.database.inTransaction && COMMIT.test(this.source) : !this.readonly) counter.commits += 1;
      return result;
    };
  }
  return counter;
}
