import { isPlainObject } from '../../lib/json.js';
import type { N8nNode } from './n8n-document.js';

/**
 * n8n reads a node's item; Switchyard reads the step's output. Where the two differ in shape,
 * a path into the item becomes a path into the output (null: no exact equivalent):
 * - HTTP Request: the item is the response body (`{body, headers, statusCode}` with "full
 *   response"); the http step outputs `{status, headers, body}`.
 * - AI Agent and LLM chain: the item is `{output}`; the agent step outputs `{text, …}`.
 * - Webhook: the item has `params`, `webhookUrl` and `executionMode`, which the trigger
 *   payload `{method, headers, query, body}` lacks.
 * - Respond to Webhook passes its items on; the respond step outputs the response it sent.
 */
export function outputAdapter(node: N8nNode | undefined): (accessors: string[]) => string[] | null {
  if (node === undefined) return (accessors) => accessors;
  const type = node.type.split('.').pop();
  switch (type) {
    case 'httpRequest': {
      const options = isPlainObject(node.parameters.options) ? node.parameters.options : {};
      const response = isPlainObject(options.response) && isPlainObject(options.response.response) ? options.response.response : {};
      if (response.fullResponse === true)
        return (accessors) =>
          accessors[0] === 'statusCode' ? ['status', ...accessors.slice(1)] : accessors[0] === 'statusMessage' ? null : accessors;
      return (accessors) => ['body', ...accessors];
    }
    case 'agent':
    case 'chainLlm':
      return (accessors) => (accessors[0] === 'output' ? ['text', ...accessors.slice(1)] : null);
    case 'webhook':
      return (accessors) => (['params', 'webhookUrl', 'executionMode'].includes(accessors[0] ?? '') ? null : accessors);
    case 'respondToWebhook':
      return () => null;
    default:
      return (accessors) => accessors;
  }
}

/** The same adaptation for code: JavaScript reading the n8n item from the step's `input`. */
export function inputExpressionFor(source: N8nNode | undefined): string {
  const type = source?.type.split('.').pop();
  if (type === 'httpRequest') {
    const probe = outputAdapter(source)(['x']);
    return probe?.[0] === 'body'
      ? '(input == null ? input : input.body)'
      : '(input == null ? input : Object.assign({}, input, { statusCode: input.status }))';
  }
  if (type === 'agent' || type === 'chainLlm') return '(input == null ? input : { output: input.text })';
  return 'input';
}
