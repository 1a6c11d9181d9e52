/**
 * What a `{{ … }}` expression sees. It is JSONata's input (so `nodes.fetch.body.id` reads
 * from it) and each key is also bound as a variable (`$trigger`, `$item`), which still works
 * inside a nested path where the input has moved on.
 */
export interface ExpressionScope {
  /** The trigger payload `{method, headers, query, body}`. */
  trigger: unknown;
  /** Outputs of the nodes completed so far, by node id. */
  nodes: Record<string, unknown>;
  execution: unknown;
  workflow: unknown;
  /** The node's input (the output of the node feeding it). */
  input?: unknown;
  /** Inside a loop body: the current element and its position (from 0); null elsewhere. */
  item?: unknown;
  index?: number | null;
  /** Only in an approval step's `notify`: `{approve_url, reject_url, expires_at, message}`. */
  approval?: unknown;
}
