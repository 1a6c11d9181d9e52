/**
 * The n8n compatibility prelude: JavaScript put in front of an imported Code, Function or
 * FunctionItem node's code so it runs unchanged in the code step's sandbox. It offers n8n's
 * item API over Switchyard's values (`$input.all()`, `$input.first()`, `$input.last()`,
 * `$input.item`, `$json`, `items`, `item`, `$('Name')`, `$node["Name"]`, `$items("Name")`,
 * `$itemIndex`) and turns what the code returns back into a value.
 *
 * Items and values: n8n passes lists of items `{json}`; a Switchyard step passes one value.
 * An array is read as a list of items, anything else as one item, and the code's result is
 * written back the same way: one item becomes its `json`, several become an array of them.
 *
 * The original code runs inside an inner async function, so its own declarations shadow the
 * prelude's and its `return` returns from it: nothing in it needs changing. The prelude is
 * plain code (no sandbox flag), so a warm context is reused exactly as for any code step.
 */

export type CodeMode = 'all' | 'each' | 'function_item';

export const PRELUDE_MARKER = '// n8n compatibility prelude';

/**
 * @param inputExpression JavaScript reading the node's n8n input from the step's `input` (an
 * HTTP step's n8n item was its response body: `input && input.body`).
 * @param nodeIds n8n node names -> Switchyard node ids, for `$('Name')`.
 */
export function withN8nPrelude(code: string, mode: CodeMode, inputExpression: string, nodeIds: Record<string, string>): string {
  const header = [
    `${PRELUDE_MARKER} (added on import; docs/import.md). The original code is inside the function below.`,
    `const __n8n = (() => {`,
    `  const toItems = (v) => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((json) => ({ json })));`,
    `  const raw = ${inputExpression};`,
    `  const items = raw === undefined || raw === null ? [{ json: {} }] : toItems(raw);`,
    `  const ids = ${JSON.stringify(nodeIds)};`,
    `  const of = (name) => { if (!Object.prototype.hasOwnProperty.call(ids, name)) throw new Error('there is no node named "' + name + '"'); return toItems(nodes[ids[name]]); };`,
    `  const $ = (name) => { const its = of(name); return { all: () => its, first: () => its[0], last: () => its[its.length - 1], item: its[0], isExecuted: nodes[ids[name]] !== undefined }; };`,
    `  const $node = {};`,
    `  for (const name of Object.keys(ids)) Object.defineProperty($node, name, { get: () => ({ json: (of(name)[0] || {}).json }) });`,
    `  const unwrap = (v) => (v !== null && typeof v === 'object' && !Array.isArray(v) && v.json !== null && typeof v.json === 'object' ? v.json : v);`,
    `  const out = (r) => { const list = Array.isArray(r) ? r.map(unwrap) : r === undefined || r === null ? [] : [unwrap(r)]; return list.length === 1 ? list[0] : list; };`,
    `  const inputOf = (item) => ({ all: () => items, first: () => items[0], last: () => items[items.length - 1], item });`,
    `  return { items, $, $node, $items: (name) => of(name), out, inputOf };`,
    `})();`,
  ];
  const params = '(items, item, $input, $json, $itemIndex, $, $node, $items)';
  const body = `async ${params} => {\n${code}\n}`;
  if (mode === 'all') {
    return [
      ...header,
      `return __n8n.out(await (${body})(__n8n.items, undefined, __n8n.inputOf(__n8n.items[0]), (__n8n.items[0] || {}).json, 0, __n8n.$, __n8n.$node, __n8n.$items));`,
    ].join('\n');
  }
  const itemArgument = mode === 'function_item' ? '__item.json' : '__item';
  return [
    ...header,
    `const __results = [];`,
    `const __run = ${body};`,
    `for (let __i = 0; __i < __n8n.items.length; __i++) {`,
    `  const __item = __n8n.items[__i];`,
    `  const __result = await __run(__n8n.items, ${itemArgument}, __n8n.inputOf(__item), __item.json, __i, __n8n.$, __n8n.$node, __n8n.$items);`,
    `  if (__result !== undefined && __result !== null) __results.push(__result);`,
    `}`,
    `return __n8n.out(__results);`,
  ].join('\n');
}

/** n8n APIs the prelude does not offer; code using them is listed for review. */
const UNSUPPORTED_APIS: Array<[RegExp, string]> = [
  [/\$env\b/, '$env'],
  [/\$vars\b/, '$vars'],
  [/\$getWorkflowStaticData\b/, '$getWorkflowStaticData'],
  [/\bthis\.helpers\b|\$helpers\b/, 'helpers'],
  [/\brequire\s*\(/, 'require()'],
  [/\bDateTime\b|\$now\b|\$today\b/, 'Luxon dates ($now, $today, DateTime)'],
  [/\$execution\b|\$workflow\b|\$prevNode\b|\$runIndex\b|\$mode\b/, 'run metadata ($execution, $workflow, $prevNode, $runIndex)'],
  [/\.binary\b|\$binary\b/, 'binary data'],
  [/\$item\s*\(/, '$item()'],
  [/\$jmespath\b|\$evaluateExpression\b|\$fromAI\b/, 'expression helpers ($jmespath, $evaluateExpression, $fromAI)'],
  [/\bfetch\s*\(|\bsetTimeout\s*\(|\bsetInterval\s*\(/, 'network or timers (the sandbox has neither)'],
];

/** Which n8n APIs outside the prelude the code mentions (empty when it only uses what the prelude offers). */
export function unsupportedApis(code: string): string[] {
  return UNSUPPORTED_APIS.filter(([pattern]) => pattern.test(code)).map(([, name]) => name);
}
