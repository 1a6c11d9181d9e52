import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL, createTestDatabase, type TestDatabase } from '../../test/support/dialects.js';
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

  it('sends a list of texts as one text, each after a U+0001, split in the statement', () => {
    const statement = new StatementText();
    statement.param('before');
    const list = statement.textList(['{"a":"b"}', '', 'c\\d']);
    expect(list).toBe('(string_to_array($2, chr(1)))[2:]');
    expect(statement.compile(list).parameters).toEqual(['before', '\u0001{"a":"b"}\u0001\u0001c\\d']);
    // A value holding the separator itself: the list goes as an array, as pg sends one.
    const fallback = new StatementText();
    expect(fallback.textList(['a', 'b\u0001c'])).toBe('$1::text[]');
    expect(fallback.compile('').parameters).toEqual([['a', 'b\u0001c']]);
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
    expect(text).toBe(
      'insert into "execution_steps" ("id", "status", "output", "attempt") values ($2, $3, $4, default), ($5, $6, default, $7)',
    );
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

describe.skipIf(!TEST_DATABASE_URL)('StatementText.textList [postgres]', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('postgres', { migrate: false });
  });
  afterAll(() => database.close());

  const roundTrip = async (values: string[]): Promise<string[]> => {
    const statement = new StatementText();
    const result = await database.db.executeQuery<{ list: string[] }>(statement.compile(`select ${statement.textList(values)} as list`));
    return result.rows[0]!.list;
  };

  it('reads back every list as given: empty, one empty text, JSON with quotes and backslashes, unicode', async () => {
    const json = JSON.stringify({ row: { body: 'say "hi"\\n', path: 'C:\\temp', ctl: '\u0001\u0002' }, steps: [] });
    const cases: string[][] = [[], [''], ['', ''], ['a', '', 'b'], [json, json], ['snow \u2603', '{}', ' spaced ']];
    for (const values of cases) expect(await roundTrip(values)).toEqual(values);
  });

  it('reads back a list whose values hold the separator (sent as an array)', async () => {
    expect(await roundTrip(['a\u0001b', '"q"'])).toEqual(['a\u0001b', '"q"']);
  });
});
