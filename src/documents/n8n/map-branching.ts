import { isPlainObject } from '../../lib/json.js';
import type { MapResult, NodeContext } from './map-context.js';
import { legacyComparison, translateFilter, translateLegacyConditions } from './n8n-conditions.js';
import { isSingleExpression, translateJsExpression } from './n8n-expressions.js';

/** IF: output 0 is `true`, output 1 is `false`. Conditions of every version become one JSONata condition. */
export function mapIf(ctx: NodeContext): MapResult {
  const version = ctx.node.typeVersion ?? 1;
  const translated =
    version >= 2
      ? translateFilter(ctx.param('conditions'), ctx.expressions)
      : translateLegacyConditions(ctx.param('conditions'), ctx.param('combineOperation', 'all'), ctx.expressions);
  if (!translated.ok) return { placeholder: `the condition ${translated.reason}` };
  return {
    type: 'if',
    config: { condition: `{{ ${translated.text} }}` },
    outputs: 2,
    outputPorts: (index) => [index === 0 ? 'true' : 'false'],
  };
}

/**
 * Switch, every version: each rule becomes a case whose port is named after its output (the
 * rule's renamed output, else `output_<n>`), routed by comparing `value: true` with each rule's
 * condition, first match wins (n8n's default). The fallback output maps onto `default`: "extra"
 * to the extra output's connections, an output index to that output's connections as well.
 */
export function mapSwitch(ctx: NodeContext): MapResult {
  const version = ctx.node.typeVersion ?? 1;
  const mode = ctx.param('mode', 'rules');
  if (mode === 'expression') return expressionSwitch(ctx, version);
  const rules = version >= 3 ? filterRules(ctx) : legacyRules(ctx);
  if ('placeholder' in rules) return rules;
  const options = isPlainObject(ctx.param('options')) ? (ctx.param('options') as Record<string, unknown>) : {};
  if (options.allMatchingOutputs === true)
    ctx.note('expressions', '/cases', 'n8n sent each item to every matching output; the switch step takes the first match only');
  const fallback = version >= 3 ? (options.fallbackOutput ?? 'none') : (ctx.param('fallbackOutput', -1) as unknown);
  const ports = rules.names;
  const count = ports.length;
  const fallbackIndex = fallback === 'extra' ? count : typeof fallback === 'number' && fallback >= 0 ? fallback : -1;
  return {
    type: 'switch',
    config: { value: true, cases: rules.conditions.map((condition, i) => ({ port: ports[i], equals: condition })) },
    outputs: fallback === 'extra' ? count + 1 : count,
    outputPorts: (index) => {
      const out = index < count ? [ports[index]!] : [];
      if (index === fallbackIndex) out.push('default');
      return out;
    },
    notes: [...ctx.notes],
  };
}

type Rules = { conditions: string[]; names: string[] } | { placeholder: string };

function filterRules(ctx: NodeContext): Rules {
  const rules = ctx.param('rules');
  const values = isPlainObject(rules) && Array.isArray(rules.values) ? rules.values : [];
  const conditions: string[] = [];
  const names: string[] = [];
  for (const [i, rule] of values.entries()) {
    if (!isPlainObject(rule)) return { placeholder: `rule ${i} is not an object` };
    const translated = translateFilter(rule.conditions, ctx.expressions);
    if (!translated.ok) return { placeholder: `rule ${i}'s condition ${translated.reason}` };
    conditions.push(`{{ ${translated.text} }}`);
    names.push(portName(rule.renameOutput === true ? rule.outputKey : undefined, i, names));
  }
  return { conditions, names };
}

function legacyRules(ctx: NodeContext): Rules {
  const dataType = String(ctx.param('dataType', 'number'));
  const rules = ctx.param('rules');
  const list = isPlainObject(rules) && Array.isArray(rules.rules) ? rules.rules : [];
  // Version 1-2 rules name their output by index; several rules may share one.
  const byOutput = new Map<number, string[]>();
  for (const [i, rule] of list.entries()) {
    if (!isPlainObject(rule)) return { placeholder: `rule ${i} is not an object` };
    const translated = legacyComparison(dataType, rule.operation, ctx.param('value1'), rule.value2, ctx.expressions);
    if (!translated.ok) return { placeholder: `rule ${i}'s condition ${translated.reason}` };
    const output = typeof rule.output === 'number' ? rule.output : 0;
    byOutput.set(output, [...(byOutput.get(output) ?? []), translated.text]);
  }
  const outputs = Math.max(4, ...[...byOutput.keys()].map((o) => o + 1));
  const conditions: string[] = [];
  const names: string[] = [];
  for (let o = 0; o < outputs; o++) {
    const parts = byOutput.get(o) ?? ['false'];
    conditions.push(`{{ ${parts.length === 1 ? parts[0] : `(${parts.join(' or ')})`} }}`);
    names.push(`output_${o}`);
  }
  return { conditions, names };
}

function expressionSwitch(ctx: NodeContext, version: number): MapResult {
  const count = Number(ctx.param(version >= 3 ? 'numberOutputs' : 'outputsAmount', 4));
  const output = ctx.param('output');
  let value: unknown = typeof output === 'number' ? output : undefined;
  if (isSingleExpression(output)) {
    const inner = (output as string).slice(1).trim();
    const translated = translateJsExpression(inner.slice(2, -2), ctx.expressions);
    if (!translated.ok) return { placeholder: `the output expression ${translated.reason}` };
    value = `{{ ${translated.text} }}`;
  }
  if (value === undefined) return { placeholder: 'the output index is not a number or an expression' };
  const names = Array.from({ length: count }, (_, i) => `output_${i}`);
  return {
    type: 'switch',
    config: { value, cases: names.map((port, i) => ({ port, equals: i })) },
    outputs: count,
    outputPorts: (index) => (index < count ? [names[index]!] : []),
  };
}

/** A case port: lower snake case of the renamed output, unique, never `default` or `error`. */
function portName(label: unknown, index: number, taken: string[]): string {
  let name =
    typeof label === 'string'
      ? label
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '_')
          .replace(/^_+|_+$/g, '')
      : '';
  if (!/^[a-z]/.test(name) || name === 'default' || name === 'error') name = name === '' ? `output_${index}` : `output_${name}`;
  name = name.slice(0, 60);
  let unique = name;
  for (let n = 2; taken.includes(unique); n++) unique = `${name}_${n}`;
  return unique;
}
