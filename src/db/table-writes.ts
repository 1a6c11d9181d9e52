import type {
  Kysely,
  KyselyPlugin,
  OperationNode,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';

/**
 * Row writes by plain statement, for the engine's hottest writes (a step row, an execution's
 * row). Where a dialect offers it (SQLite: better-sqlite3 statements run synchronously on the
 * connection the transaction holds), these skip Kysely's query building, compiling and plugins,
 * which cost ~40 µs a statement: about a tenth of the main thread's time per webhook delivery
 * in the webhook benchmark's profile. On PostgreSQL callers use the query builder, but for the
 * group commit's one statement, written by hand (statement-text.ts) and counted by its sender.
 */
export interface DirectWrites {
  /** Inserts one row; keys whose value is undefined are left out, as Kysely does. Returns the row's rowid (its integer primary key, where it has one). */
  insert(table: string, row: object): number;
  /** Updates the row with this id (and, given, one of these statuses); returns the rows changed. */
  update(table: string, changes: object, id: string, statusIn?: readonly string[]): number;
  /** Reads the first row of a query given as SQL with `?` parameters (a hot path's fixed look-up); undefined when none. */
  get(sqlText: string, parameters: readonly unknown[]): unknown;
  /** Reads every row of a query given as SQL with `?` parameters. */
  all(sqlText: string, parameters: readonly unknown[]): unknown[];
  /** Runs a write given as SQL with `?` parameters, counted against `table`; returns the rows changed. */
  run(table: string, sqlText: string, parameters: readonly unknown[]): number;
}

function tableName(node: OperationNode | undefined): string | null {
  if (!node) return null;
  if (node.kind === 'TableNode') return (node as unknown as { table: { identifier: { name: string } } }).table.identifier.name;
  if (node.kind === 'AliasNode') return tableName((node as unknown as { node: OperationNode }).node);
  return null;
}

function writtenTables(node: RootOperationNode): string[] {
  switch (node.kind) {
    case 'InsertQueryNode':
      return [tableName(node.into)].filter((t): t is string => t !== null);
    case 'UpdateQueryNode':
      return [tableName(node.table)].filter((t): t is string => t !== null);
    case 'DeleteQueryNode':
      return node.from.froms.map(tableName).filter((t): t is string => t !== null);
    default:
      return [];
  }
}

/**
 * Counts the writes this process sends to each table, so an in-process cache can tell whether a
 * table changed since it read it. It only looks at the root node of each query: no tree walk.
 * Writes through raw `sql` templates are not seen; the code base writes through the builder, or
 * through DirectWrites, which counts its writes here, or counts them itself (`countWrite`).
 */
export class TableWrites implements KyselyPlugin {
  private readonly counts = new Map<string, number>();
  private total = 0;

  /** A number that changes whenever one of the tables is written. */
  version(tables: readonly string[]): number {
    let sum = 0;
    for (const table of tables) sum += this.counts.get(table) ?? 0;
    return sum;
  }

  /** Changes on every write to any table. */
  get any(): number {
    return this.total;
  }

  /** Where the dialect offers them, plain-statement writes that count here too (see direct-writes.ts). */
  direct: DirectWrites | null = null;

  /** Counts a write to `table` that did not go through the query builder. */
  count(table: string): void {
    this.counts.set(table, (this.counts.get(table) ?? 0) + 1);
    this.total += 1;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    for (const table of writtenTables(args.node)) this.count(table);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/** Counts a write made by a raw statement (a function call, a statement of several CTEs) on the TableWrites of `db`, if it has one. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema: only the executor is used
export function countWrite(db: Kysely<any>, table: string): void {
  for (const plugin of db.getExecutor().plugins) if (plugin instanceof TableWrites) plugin.count(table);
}
