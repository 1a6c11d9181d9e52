import { AppError } from '../../errors/app-error.js';
import type { ResourceDefinition } from './resource-definition.js';

/**
 * Parses `include=a,b` against the relationship names a route can include. Per JSON:API, a
 * request to include what the route cannot is 400 naming the parameter.
 */
export function parseInclude(raw: unknown, definition: ResourceDefinition, allowed: readonly string[]): string[] {
  if (raw === undefined || raw === '') return [];
  if (typeof raw !== 'string')
    throw new AppError('invalid_query_parameter', 'include must be a comma-separated list of relationship names', { parameter: 'include' });
  const names = raw.split(',').map((s) => s.trim());
  for (const name of names) {
    if (!allowed.includes(name)) {
      const what =
        allowed.length === 0
          ? `${definition.type} has no relationships to include`
          : `${definition.type} can include ${allowed.join(', ')}`;
      throw new AppError('invalid_query_parameter', `cannot include "${name}": ${what}`, { parameter: 'include' });
    }
  }
  return [...new Set(names)];
}

export function rejectInclude(raw: unknown, definition: ResourceDefinition): void {
  parseInclude(raw, definition, []);
}
