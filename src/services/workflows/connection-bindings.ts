import { connectionFieldsOf } from '../../documents/reference-fields.js';
import { writePointer } from '../../documents/json-pointer-path.js';

/**
 * Clears every `connection_id` of a graph's node configs, in place (DESIGN.md "connection
 * bindings reset": duplicates and imports never carry a connection over). Returns the pointers
 * it cleared, relative to the graph.
 */
export function clearConnections(graph: unknown): string[] {
  const pointers = connectionFieldsOf(graph);
  for (const pointer of pointers) writePointer(graph, pointer, null);
  return pointers;
}
