import type { SqlDialect } from '../../../db/dialect/dialect.js';
import { declaredFields } from '../../../store/row-schema.js';
import type { StoreRow } from '../../../store/store-repository.js';
import { reference } from '../../jsonapi/filter-sql.js';
import type { AttributeSpec, ResourceDefinition } from '../../jsonapi/resource-definition.js';
import { storeRowResource } from './store-resource.js';

/**
 * What `filter` can name on a store's rows: the row resource's attributes, `id` (the key, as
 * the JSON:API id), and `row.<field>` for each top-level field the store's schema declares
 * with one scalar type. Such a field is read out of the row's JSON per dialect and compared as
 * its declared type, with the same operators as any attribute of that kind.
 */
export function rowFilterDefinition(store: Pick<StoreRow, 'schema'>, dialect: SqlDialect): ResourceDefinition {
  const fields = declaredFields(JSON.parse(store.schema));
  const attributes: Record<string, AttributeSpec> = { ...storeRowResource.attributes, id: { kind: 'string', column: 'key' } };
  for (const [name, declared] of fields) {
    if (typeof declared === 'string') continue;
    attributes[`row.${name}`] = {
      kind: declared.type,
      nullable: true,
      expression: (alias) => dialect.jsonMember(reference(alias, 'row'), name, declared.type),
    };
  }
  return {
    ...storeRowResource,
    attributes,
    filterHint: (name) => {
      if (name === 'row') return "filter on a row's fields with filter[row.<field>], e.g. filter[row.status][eq]=paid";
      if (!name.startsWith('row.')) return undefined;
      const reason = fields.get(name.slice(4));
      if (typeof reason === 'string') return `'${name}' cannot be filtered: the store's schema declares it, but ${reason}`;
      return `'${name}' is not a field the store's schema declares; row filters apply to top-level properties declared with type string, integer, number or boolean`;
    },
  };
}
