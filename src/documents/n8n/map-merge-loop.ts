import type { MapResult, NodeContext } from './map-context.js';

/**
 * Merge: the inputs arrive as the outputs of the nodes feeding input 1 and input 2 (by node id
 * in `nodes`; an input whose branch did not run is empty), and a code step combines them as the
 * mode says. Modes that join by field values or SQL are not mapped.
 */
export function mapMerge(ctx: NodeContext, inputs: string[][]): MapResult {
  const version = ctx.node.typeVersion ?? 1;
  const mode = String(ctx.param('mode', version >= 2 ? 'append' : 'append'));
  const read = (index: number) => `[${(inputs[index] ?? []).map((id) => `...items(nodes[${JSON.stringify(id)}])`).join(', ')}]`;
  const header = [
    '// n8n Merge (added on import; docs/import.md): items of input 1 and input 2, by the nodes that feed them.',
    'const items = (v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);',
    'const one = (list) => (list.length === 1 ? list[0] : list);',
    `const input1 = ${read(0)};`,
    `const input2 = ${read(1)};`,
  ];
  let body: string;
  switch (mode) {
    case 'append':
      body = 'return one([...input1, ...input2]);';
      break;
    case 'chooseBranch':
    case 'passThrough': {
      const output = String(ctx.param(mode === 'chooseBranch' ? 'output' : 'output', 'input1'));
      const which = ctx.param('chooseBranchMode', 'waitForBoth');
      if (which !== 'waitForBoth' && mode === 'chooseBranch') return { placeholder: `choose-branch mode "${String(which)}" is not known` };
      body = output === 'empty' ? 'return {};' : `return one(${output === 'input2' ? 'input2' : 'input1'});`;
      break;
    }
    case 'wait':
      body = 'return {};';
      break;
    case 'mergeByIndex':
    case 'mergeByPosition':
    case 'combine': {
      const how =
        mode === 'combine' ? String(ctx.param('combineBy', ctx.param('combinationMode', 'combineByFields'))) : 'combineByPosition';
      if (how !== 'combineByPosition' && how !== 'mergeByPosition') return { placeholder: `combining by ${how} is not mapped` };
      body =
        'const n = Math.min(input1.length, input2.length);\nreturn one(Array.from({ length: n }, (_, i) => ({ ...input1[i], ...input2[i] })));';
      break;
    }
    default:
      return { placeholder: `merge mode "${mode}" is not mapped` };
  }
  return { type: 'code', config: { code: [...header, body].join('\n') } };
}

/**
 * Loop Over Items (splitInBatches). Version 3: output 0 is "done", output 1 the loop; earlier
 * versions loop on output 0 and signal the end through node context. The edge leading back
 * into the node closes an iteration and is dropped (a loop step's body ends where it leads
 * nowhere). Batches of more than one item become lists of items.
 */
export function mapSplitInBatches(ctx: NodeContext): MapResult {
  const version = ctx.node.typeVersion ?? 1;
  const size = ctx.param('batchSize', version >= 3 ? 1 : 10);
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1) return { placeholder: 'the batch size is not a whole number' };
  const all = '$append([], input)';
  const items =
    size === 1
      ? `{{ ${all} }}`
      : `{{ ($all := ${all}; $map([0..$ceil($count($all) / ${size}) - 1], function($b) { [$filter($all, function($v, $i) { $floor($i / ${size}) = $b })] })) }}`;
  if (version < 3)
    ctx.note(
      'expressions',
      '/items',
      'n8n 1-2 ended the loop when node context "noItemsLeft" was true; the loop step ends by itself: remove the check',
    );
  return {
    type: 'loop',
    config: { items },
    outputs: version >= 3 ? 2 : 1,
    outputPorts: (index) => [version >= 3 ? (index === 0 ? 'done' : 'body') : 'body'],
    notes: [...ctx.notes],
  };
}
