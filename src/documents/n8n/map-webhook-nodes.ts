import { isPlainObject } from '../../lib/json.js';
import type { MapResult, NodeContext } from './map-context.js';
import { isSingleExpression, templateAsJsonata } from './n8n-expressions.js';

const RESPONSE_MODES: Record<string, string> = {
  onReceived: 'immediate',
  lastNode: 'last_step',
  responseNode: 'respond_step',
  streaming: 'last_step',
};

/**
 * The n8n Webhook trigger. The endpoint is Switchyard's (`webhook_url`, a new `webhook_id`), so
 * the n8n path and method are not kept (the endpoint takes every method and passes it on in
 * `trigger.method`); the response mode maps one to one. Verification is never imported:
 * the node gets a bearer token of its own (fail closed), and the n8n authentication becomes a
 * requirement either way.
 */
export function mapWebhook(ctx: NodeContext): MapResult {
  const mode = String(ctx.param('responseMode', 'onReceived'));
  const responseMode = RESPONSE_MODES[mode];
  if (responseMode === undefined) return { placeholder: `the response mode "${mode}" is not known` };
  const path = ctx.param('path', ctx.node.webhookId ?? '');
  const authentication = String(ctx.param('authentication', 'none'));
  const methods = ctx.param('httpMethod', 'GET');
  ctx.note(
    'secrets',
    '/verification',
    authentication === 'none'
      ? `the n8n webhook "${String(path)}" accepted unauthenticated requests; here it requires the bearer token shown once in meta.webhook_tokens (or choose verification {"method": "none"} explicitly), and it answers at its new webhook_url`
      : `the n8n webhook "${String(path)}" checked ${authentication}; here it requires the bearer token shown once in meta.webhook_tokens (or an HMAC secret), and it answers at its new webhook_url`,
    { original_path: path, original_methods: methods, original_authentication: authentication },
  );
  ctx.noteCredentials('/verification', 'webhook callers now authenticate with the bearer token or an HMAC signature');
  if (mode === 'streaming')
    ctx.note('expressions', '/response_mode', "n8n streamed the response; here the caller gets the last step's output when the run ends");
  if (Array.isArray(methods) && methods.length > 1 && ctx.param('multipleMethods') === true) {
    ctx.note(
      'expressions',
      '/response_mode',
      'the n8n webhook had one output per HTTP method; every delivery now leaves through one port: branch on trigger.method with an if or switch step',
    );
  }
  return {
    type: 'webhook',
    config: { response_mode: responseMode, verification: { method: 'bearer' } },
    outputPorts: () => ['out'],
    notes: [...ctx.notes],
  };
}

/**
 * Respond to Webhook: status, headers and the body the n8n node would send for each
 * `respondWith`. The node passes its input on, as n8n's does. An item list is read as one value
 * (an array: several items), so "first incoming item" is `input[0]` (an object reads as itself).
 */
export function mapRespondToWebhook(ctx: NodeContext): MapResult {
  const respondWith = String(ctx.param('respondWith', 'firstIncomingItem'));
  const options = isPlainObject(ctx.param('options')) ? (ctx.param('options') as Record<string, unknown>) : {};
  const config: Record<string, unknown> = {
    status: typeof options.responseCode === 'number' ? options.responseCode : respondWith === 'redirect' ? 307 : 200,
  };
  if (typeof options.responseCode === 'string') config.status = ctx.translate(options.responseCode, '/status');
  const headers: Record<string, unknown> = {};
  const entries =
    isPlainObject(options.responseHeaders) && Array.isArray(options.responseHeaders.entries) ? options.responseHeaders.entries : [];
  for (const entry of entries) {
    if (!isPlainObject(entry) || typeof entry.name !== 'string') continue;
    headers[entry.name.toLowerCase()] = ctx.translate(String(entry.value ?? ''), `/headers/${entry.name.toLowerCase()}`);
  }
  const key = typeof options.responseKey === 'string' && options.responseKey !== '' ? options.responseKey : null;
  const wrap = (jsonata: string) => (key === null ? `{{ ${jsonata} }}` : `{{ ${nestUnder(key, jsonata)} }}`);
  switch (respondWith) {
    case 'firstIncomingItem':
      config.body = wrap('input[0]');
      break;
    case 'allIncomingItems':
      config.body = wrap('$append([], input)');
      break;
    case 'json': {
      const body = ctx.param('responseBody', '');
      if (typeof body !== 'string') config.body = ctx.translate(body, '/body');
      else if (isSingleExpression(body)) config.body = ctx.translate(body, '/body');
      else if (body.startsWith('=')) {
        const jsonata = templateAsJsonata(body, ctx.expressions);
        if (jsonata.ok) config.body = `{{ $eval(${jsonata.text}) }}`;
        else config.body = ctx.translate(body, '/body');
      } else {
        try {
          config.body = body === '' ? null : JSON.parse(body);
        } catch {
          ctx.note('expressions', '/body', 'the n8n response body is not valid JSON (n8n refused it at run time); it is sent as text', {
            original: body,
          });
          config.body = body;
        }
      }
      break;
    }
    case 'text':
      config.body = ctx.translate(String(ctx.param('responseBody', '')), '/body');
      if (headers['content-type'] === undefined) headers['content-type'] = 'text/plain; charset=utf-8';
      break;
    case 'noData':
      config.body = null;
      break;
    case 'redirect':
      headers.location = ctx.translate(String(ctx.param('redirectURL', '')), '/headers/location');
      config.body = null;
      break;
    default:
      return { placeholder: `responding with ${respondWith} has no Switchyard equivalent` };
  }
  config.headers = headers;
  return { type: 'respond_to_webhook', config, notes: [...ctx.notes] };
}

/** `a.b` + `x` -> `{"a": {"b": x}}` (lodash `set` on an empty object, as n8n's responseKey does). */
function nestUnder(path: string, jsonata: string): string {
  return path.split('.').reduceRight((inner, key) => `{${JSON.stringify(key)}: ${inner}}`, jsonata);
}
