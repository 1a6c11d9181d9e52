import qs from 'qs';
import { describe, expect, it } from 'vitest';
import { parseFields, selectedAttributes } from './fields.js';
import type { ResourceDefinition } from './resource-definition.js';
import { expectInvalidParameter } from '../../../test/support/expect-invalid-parameter.js';

const expectInvalidQuery = (query: string, parameter: string, detail: string) =>
  expectInvalidParameter(() => parseQuery(query), parameter, detail);

const workflow: ResourceDefinition = {
  type: 'workflow',
  table: 'workflows',
  attributes: {
    name: { kind: 'string', default: true },
    status: { kind: 'enum', values: ['inactive', 'active'], default: true },
    graph: { kind: 'object' },
    description: { kind: 'string', nullable: true },
  },
  defaultSort: '-created_at',
};
const execution: ResourceDefinition = {
  type: 'execution',
  table: 'executions',
  attributes: { status: { kind: 'string', default: true }, output: { kind: 'object' } },
  defaultSort: '-inserted_at',
};
const definitions = [workflow, execution];

function parseQuery(query: string) {
  return parseFields(qs.parse(query, { depth: 10, arrayLimit: 100 }).fields, definitions);
}

describe('parseFields and selectedAttributes', () => {
  it('returns the default attributes of a type the request does not mention', () => {
    const fields = parseQuery('fields[execution]=output');
    expect(selectedAttributes(workflow, fields)).toEqual(['name', 'status']);
    expect(selectedAttributes(workflow, parseQuery(''))).toEqual(['name', 'status']);
  });

  it('returns the requested attributes in the definition order', () => {
    const fields = parseQuery('fields[workflow]=graph,name&fields[execution]=output,status');
    expect(fields).toEqual(
      new Map([
        ['workflow', new Set(['graph', 'name'])],
        ['execution', new Set(['output', 'status'])],
      ]),
    );
    expect(selectedAttributes(workflow, fields)).toEqual(['name', 'graph']);
    expect(selectedAttributes(execution, fields)).toEqual(['status', 'output']);
  });

  it('reads an empty list as no attributes at all', () => {
    const fields = parseQuery('fields[workflow]=');
    expect(fields.get('workflow')).toEqual(new Set());
    expect(selectedAttributes(workflow, fields)).toEqual([]);
  });

  it.each([
    ['fields[folder]=name', 'fields[folder]', "Unknown resource type 'folder'; fields apply to workflow, execution"],
    ['fields[workflow]=name,colour', 'fields[workflow]', "'colour' is not an attribute of workflow"],
    ['fields[workflow]=name,,graph', 'fields[workflow]', "'' is not an attribute of workflow"],
    ['fields[workflow]=id', 'fields[workflow]', "'id' is not an attribute of workflow"],
    ['fields[workflow]=constructor', 'fields[workflow]', "'constructor' is not an attribute of workflow"],
    ['fields[workflow]=name&fields[workflow]=graph', 'fields[workflow]', 'fields[workflow] takes one comma-separated list of attributes'],
    ['fields=name', 'fields', 'fields is keyed by resource type, e.g. fields[workflow]=name,status'],
  ])('refuses %s', (query, parameter, detail) => {
    expectInvalidQuery(query, parameter, detail);
  });
});
