import { isPlainObject } from '../../lib/json.js';
import { UNBOUND_ID } from '../../graph/call-targets.js';
import type { MapResult, NodeBinding, NodeContext } from './map-context.js';

/** The export key an n8n workflow gets on import, so calls to it from other n8n documents find it. */
export function n8nExportKey(n8nId: string): string {
  return `n8n-${n8nId}`.replace(/[^A-Za-z0-9:._-]/g, '_').slice(0, 200);
}

/**
 * Which workflow an n8n node calls, from every shape n8n stored it in: a plain id (1.0), a
 * resource locator `{__rl, value, mode, cachedResultName}` (1.1+), `={{ $workflow.id }}` (this
 * workflow), or another expression (not bindable).
 */
export function workflowReference(
  raw: unknown,
  ownId: string | null,
): { self: true } | { id: string; name: string | null } | { unknown: string } {
  let value = raw;
  let name: string | null = null;
  if (isPlainObject(raw)) {
    value = raw.value;
    name = typeof raw.cachedResultName === 'string' ? raw.cachedResultName : null;
  }
  if (typeof value === 'number') value = String(value);
  if (typeof value !== 'string' || value === '') return { unknown: 'names no workflow' };
  if (value.startsWith('=')) {
    return /^=\s*\{\{\s*\$workflow\.id\s*\}\}\s*$/.test(value)
      ? { self: true }
      : { unknown: `names its workflow with the expression ${value.slice(1)}` };
  }
  if (ownId !== null && value === ownId) return { self: true };
  return { id: value, name };
}

/** A binding for a workflow reference at `path`; the value stays the nil UUID until bound. */
export function workflowBinding(reference: ReturnType<typeof workflowReference>, path: string): NodeBinding {
  if ('self' in reference) return { path, resource: 'workflow', by: { self: true }, detail: 'the workflow calls itself' };
  if ('unknown' in reference)
    return { path, resource: 'workflow', by: null, detail: `the n8n node ${reference.unknown}: choose the workflow to call` };
  return {
    path,
    resource: 'workflow',
    by: { export_key: n8nExportKey(reference.id) },
    detail: `calls n8n workflow ${reference.id}${reference.name ? ` ("${reference.name}")` : ''}: import it too (it is bound when found), or choose the workflow to call`,
    facts: { n8n_workflow_id: reference.id, name: reference.name },
  };
}

/**
 * Execute Workflow -> call_workflow. "Once for all items" calls with the input as it is; "once
 * for each item" has no per-item form here and is listed. Waiting maps to `wait`.
 */
export function mapExecuteWorkflow(ctx: NodeContext): MapResult {
  const source = ctx.param('source', 'database');
  if (source !== 'database')
    return { placeholder: `the workflow to call comes from ${String(source)}; call_workflow calls a workflow of this workspace` };
  const reference = workflowReference(ctx.param('workflowId'), ctx.workflow.id);
  const options = isPlainObject(ctx.param('options')) ? (ctx.param('options') as Record<string, unknown>) : {};
  if (ctx.param('mode', 'once') === 'each')
    ctx.note(
      'expressions',
      '/input',
      'n8n called the workflow once per item; call_workflow calls it once with the input (a list of items when there are several)',
    );
  const inputs = ctx.param('workflowInputs');
  if (isPlainObject(inputs) && isPlainObject(inputs.value) && Object.keys(inputs.value).length > 0) {
    ctx.note('expressions', '/input', 'n8n mapped named inputs for the sub-workflow; the whole input is passed instead', {
      inputs: inputs.value,
    });
  }
  return {
    type: 'call_workflow',
    config: { workflow_id: UNBOUND_ID, input: '{{ input }}', wait: options.waitForSubWorkflow !== false },
    bindings: [workflowBinding(reference, '/workflow_id')],
    notes: [...ctx.notes],
  };
}
