import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { insertRows, quoteIdent, StatementText } from './statement-text.js';

describe('StatementText', () => {
  it('numbers placeholders in the order values are added, with a cast when asked', () => {
    const statement = new StatementText();
    const first = statement.param('a');
    const second = statement.param(['x', 'y'], 'text[]');
    expect([first, second]).toEqual(['$1', '$2::text[]']);
    // Parts may be joined in any order: the numbers follow the values, not the text.
    const compiled = statement.compile(`select ${second}, ${first}`);
    expect(compiled.sql).toBe('select $2::text[], $1');
    expect(compiled.parameters).toEqual(['a', ['x', 'y']]);
  });

  it('quotes identifiers, doubling a quote inside', () => {
    expect(quoteIdent('execution_steps')).toBe('"execution_steps"');
    expect(quoteIdent('a"b')).toBe('"a""b"');
  });
});

describe('insertRows', () => {
  it('writes a multi-row insert as Kysely does: every defined key a column, in order of first sight, default where a row lacks it', () => {
    const statement = new StatementText();
    statement.param('before');
    const text = insertRows(statement, 'execution_steps', [
      { id: 'a', status: 'completed', output: null, skipped: undefined },
      { id: 'b', status: 'running', attempt: 2 },
    ]);
    expect(text).toBe('insert into "execution_steps" ("id", "status", "output", "attempt") values ($2, $3, $4, default), ($5, $6, default, $7)');
    expect(statement.compile(text).parameters).toEqual(['before', 'a', 'completed', null, 'b', 'running', 2]);
  });

  it('passes objects and arrays to the driver as values', () => {
    const statement = new StatementText();
    const text = insertRows(statement, 't', [{ doc: { a: 1 }, list: [1, 2] }]);
    expect(text).toBe('insert into "t" ("doc", "list") values ($1, $2)');
    expect(statement.compile(text).parameters).toEqual([{ a: 1 }, [1, 2]]);
  });

  it('refuses an SQL expression where a value belongs', () => {
    expect(() => insertRows(new StatementText(), 't', [{ at: sql`now()` }])).toThrow(/t\.at is an SQL expression/);
  });
});
