import { isPlainObject } from '../../lib/json.js';
import type { MapResult, NodeContext } from './map-context.js';

/**
 * Triggers and plain steps: manual and sub-workflow triggers, No Operation, Stop and Error,
 * Wait. Each maps to a step that does exactly what the n8n node did to its item.
 */

/** n8n's manual trigger (and the old Start node) emits one empty item. A root `set` does the same on /run. */
export function mapManualTrigger(): MapResult {
  return { type: 'set', config: { values: {} } };
}

/** "When executed by another workflow" emits what the caller passed: the call's input is the trigger body. */
export function mapExecuteWorkflowTrigger(ctx: NodeContext): MapResult {
  const inputs = ctx.param('workflowInputs');
  if (isPlainObject(inputs) && Array.isArray(inputs.values) && inputs.values.length > 0) {
    ctx.note('expressions', '/code', "the n8n trigger declared named inputs; the caller's input arrives whole as trigger.body, unchecked", {
      inputs: inputs.values,
    });
  }
  return { type: 'code', config: { code: 'return trigger.body;' } };
}

/** No Operation passes its items on unchanged. */
export function mapNoOp(): MapResult {
  return { type: 'code', config: { code: 'return input;' } };
}

/** Stop and Error fails the run with the node's message, without retries. */
export function mapStopAndError(ctx: NodeContext): MapResult {
  const type = ctx.param('errorType', 'errorMessage');
  if (type === 'errorObject') {
    const raw = ctx.param('errorObject', '{}');
    if (typeof raw !== 'string' || raw.startsWith('=')) return { placeholder: 'the error object is built by an expression' };
    return { type: 'code', config: { code: `const error = ${JSON.stringify(raw)};\nthrow new NonRetriableError(error);` } };
  }
  const message = ctx.param('message', ctx.param('errorMessage', ''));
  if (typeof message !== 'string' || message.startsWith('=')) return { placeholder: 'the error message is built by an expression' };
  return { type: 'code', config: { code: `throw new NonRetriableError(${JSON.stringify(message)});` } };
}

const UNIT_MS: Record<string, number> = { seconds: 1000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 };

/** Wait for an amount of time or until a moment; waiting for a webhook or a form is not a step here. */
export function mapWait(ctx: NodeContext): MapResult {
  const resume = ctx.param('resume', 'timeInterval');
  if (resume === 'specificTime') {
    const dateTime = ctx.translate(ctx.param('dateTime', ''), '/until');
    return { type: 'wait', config: { until: dateTime }, notes: [...ctx.notes] };
  }
  if (resume !== 'timeInterval') return { placeholder: `the node waits for ${String(resume)}, which the wait step cannot` };
  // n8n leaves parameters at their defaults out of exports: 1 hour.
  const amount = ctx.param('amount', 1);
  const unit = String(ctx.param('unit', 'hours'));
  const factor = UNIT_MS[unit];
  if (factor === undefined) return { placeholder: `the wait unit "${unit}" is not known` };
  if (typeof amount === 'number') return { type: 'wait', config: { duration_ms: Math.round(amount * factor) } };
  const translated = ctx.translate(amount, '/duration_ms');
  if (typeof translated === 'string' && /^\s*\{\{[\s\S]*\}\}\s*$/.test(translated)) {
    return { type: 'wait', config: { duration_ms: `{{ (${translated.trim().slice(2, -2).trim()}) * ${factor} }}` }, notes: [...ctx.notes] };
  }
  return { placeholder: 'the wait amount is neither a number nor an expression' };
}
