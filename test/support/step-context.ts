import { RunCancel } from '../../src/lib/cancellation.js';
import { manualClock } from '../../src/lib/clock.js';
import type { StepRunContext } from '../../src/steps/step-runtime.js';

/** A step runtime's context for unit tests: the given fields over harmless defaults. */
export function stepContext(fields: Partial<StepRunContext> = {}): StepRunContext {
  return {
    nodeId: 'node',
    config: {},
    input: null,
    nodes: {},
    trigger: null,
    cancel: new RunCancel(),
    clock: manualClock(),
    attempt: 1,
    execution: { id: 'e', workflowId: 'w', workspaceId: 's' },
    settings: { httpAllow: [] },
    ...fields,
  };
}
