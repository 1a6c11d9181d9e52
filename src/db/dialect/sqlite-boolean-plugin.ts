import {
  OperationNodeTransformer,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type PrimitiveValueListNode,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
  type ValueNode,
} from 'kysely';

/** A value as better-sqlite3 can bind it: booleans as 0/1 (shared with sqlite-direct-writes.ts). */
export const encode = (value: unknown) => (typeof value === 'boolean' ? (value ? 1 : 0) : value);

class BooleanToInteger extends OperationNodeTransformer {
  protected override transformValue(node: ValueNode): ValueNode {
    const next = super.transformValue(node);
    return typeof next.value === 'boolean' ? Object.assign({}, next, { value: encode(next.value) }) : next;
  }

  protected override transformPrimitiveValueList(node: PrimitiveValueListNode): PrimitiveValueListNode {
    const next = super.transformPrimitiveValueList(node);
    return next.values.some((v) => typeof v === 'boolean') ? Object.assign({}, next, { values: next.values.map(encode) }) : next;
  }
}

/**
 * better-sqlite3 binds no booleans, and SQLite stores them as 0/1 anyway. This plugin encodes
 * every boolean parameter of every query as 0/1, so repositories and services write `true`
 * on both dialects; reads go through `Boolean(value)` where the attribute is a boolean.
 */
export class SqliteBooleanPlugin implements KyselyPlugin {
  private readonly transformer = new BooleanToInteger();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.transformer.transformNode(args.node);
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}
