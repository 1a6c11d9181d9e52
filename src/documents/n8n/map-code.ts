import type { MapResult, NodeContext } from './map-context.js';
import { unsupportedApis, withN8nPrelude, type CodeMode } from './code-prelude.js';

/**
 * Code (JavaScript, both modes), Function and FunctionItem: the original code behind the n8n
 * compatibility prelude (code-prelude.ts). Python has no sandbox here and stays a placeholder.
 */
export function mapCode(ctx: NodeContext, inputExpression: string): MapResult {
  const type = ctx.node.type.split('.').pop();
  let code: unknown;
  let mode: CodeMode;
  if (type === 'function') {
    code = ctx.param('functionCode', '');
    mode = 'all';
  } else if (type === 'functionItem') {
    code = ctx.param('functionCode', '');
    mode = 'function_item';
  } else {
    const language = ctx.param('language', 'javaScript');
    if (language !== 'javaScript') return { placeholder: `the code is ${String(language)}; code steps run JavaScript only` };
    code = ctx.param('jsCode', '');
    mode = ctx.param('mode', 'runOnceForAllItems') === 'runOnceForEachItem' ? 'each' : 'all';
  }
  if (typeof code !== 'string' || code.trim() === '') return { placeholder: 'the node has no code' };
  const ids = Object.fromEntries(ctx.ids);
  for (const api of unsupportedApis(code)) {
    ctx.note('expressions', '/code', `the code uses ${api}, which the n8n compatibility prelude does not offer: review it`, { api });
  }
  return { type: 'code', config: { code: withN8nPrelude(code, mode, inputExpression, ids) }, notes: [...ctx.notes] };
}
