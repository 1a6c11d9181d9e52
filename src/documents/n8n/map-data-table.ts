import { isPlainObject } from '../../lib/json.js';
import { UNBOUND_ID } from '../../graph/call-targets.js';
import { findStepDefinition } from '../../steps/registry.js';
import { slugify } from '../slug.js';
import type { MapResult, NodeBinding, NodeContext } from './map-context.js';
import { operand } from './n8n-conditions.js';

/**
 * n8n data tables -> stores. A store row has a key, so a row operation maps when n8n finds the
 * row by one equality condition (that value is the key); an insert keys the row by the
 * execution (n8n generated an id). The table is bound to the store whose slug is the table's
 * name slugged. Reading rows needs the read_store step; where this release lacks it, the node
 * is a placeholder carrying the config it would become.
 */
export function mapDataTable(ctx: NodeContext): MapResult {
  const resource = ctx.param('resource', 'row');
  const operation = String(ctx.param('operation', 'insert'));
  if (resource !== 'row') return { placeholder: `data table ${String(resource)} operations have no store step` };
  const table = ctx.param('dataTableId');
  const tableName = isPlainObject(table)
    ? typeof table.cachedResultName === 'string'
      ? table.cachedResultName
      : typeof table.value === 'string'
        ? table.value
        : null
    : typeof table === 'string'
      ? table
      : null;
  const binding: NodeBinding =
    tableName === null || tableName.startsWith('=')
      ? { path: '/store_id', resource: 'store', by: null, detail: 'the data table is chosen by an expression: choose the store' }
      : {
          path: '/store_id',
          resource: 'store',
          by: { slug: slugify(tableName) },
          detail: `data table "${tableName}": create a store with slug "${slugify(tableName)}" (it is bound when found), or choose one`,
          facts: { table: tableName },
        };
  const key = keyOf(ctx);
  const row = rowOf(ctx);
  const save = (mode: string, keyValue: unknown): MapResult => {
    const config: Record<string, unknown> = { store_id: UNBOUND_ID, key: keyValue, row };
    if (
      isPlainObject(findStepDefinition('save_to_store')?.configSchema.properties) &&
      'mode' in (findStepDefinition('save_to_store')!.configSchema.properties as object)
    )
      config.mode = mode;
    else if (mode !== 'upsert')
      ctx.note(
        'expressions',
        '/key',
        `n8n ${operation} only wrote rows that ${mode === 'insert' ? 'did not exist' : 'existed'}; save_to_store replaces the row`,
      );
    return { type: 'save_to_store', config, bindings: [binding], notes: [...ctx.notes] };
  };
  switch (operation) {
    case 'insert':
      ctx.note(
        'expressions',
        '/key',
        'n8n generated the row id; the row is keyed by the execution id: choose a key from the row if it has one',
      );
      return save('insert', '{{ execution.id }}');
    case 'upsert':
    case 'update':
      if (key === null)
        return { placeholder: `the ${operation} finds rows by conditions other than one equality, which a store key cannot` };
      return save(operation === 'upsert' ? 'upsert' : 'update', key);
    case 'get':
    case 'deleteRows': {
      if (key === null)
        return { placeholder: `the ${operation} finds rows by conditions other than one equality, which a store key cannot` };
      const suggested =
        operation === 'get'
          ? { type: 'read_store', config: { store_id: UNBOUND_ID, key } }
          : { type: 'save_to_store', config: { store_id: UNBOUND_ID, key, row: {}, mode: 'delete' } };
      const step = findStepDefinition(suggested.type);
      if (
        step !== undefined &&
        (operation === 'get' || (isPlainObject(step.configSchema.properties) && 'mode' in (step.configSchema.properties as object)))
      ) {
        return { type: suggested.type, config: suggested.config, bindings: [binding], notes: [...ctx.notes] };
      }
      return {
        placeholder: `this release has no ${operation === 'get' ? 'read_store step' : 'store delete mode'}; the step it would become is in suggested`,
        suggested,
      };
    }
    default:
      return { placeholder: `data table operation "${operation}" has no store step` };
  }
}

/** The key: the value of the one `eq` condition of the row filter. */
function keyOf(ctx: NodeContext): unknown {
  const filters = ctx.param('filters');
  const conditions = isPlainObject(filters) && Array.isArray(filters.conditions) ? filters.conditions : [];
  if (conditions.length !== 1 || !isPlainObject(conditions[0])) return null;
  const condition = conditions[0];
  if ((condition.condition ?? 'eq') !== 'eq') return null;
  const value = operand(condition.keyValue, ctx.expressions);
  if (!value.ok) return null;
  return typeof condition.keyValue === 'string' && !condition.keyValue.startsWith('=')
    ? condition.keyValue
    : `{{ $string(${value.text}) }}`;
}

/** The row: the mapped columns, or the whole input when n8n mapped it automatically. */
function rowOf(ctx: NodeContext): unknown {
  const columns = ctx.param('columns');
  if (!isPlainObject(columns) || columns.mappingMode !== 'defineBelow') return '{{ input }}';
  return ctx.translate(isPlainObject(columns.value) ? columns.value : {}, '/row');
}
