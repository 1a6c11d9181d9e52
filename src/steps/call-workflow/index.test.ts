import { describe, expect, it } from 'vitest';
import { mergeStepConfig, validateStepConfig } from '../validate-step-config.js';
import { callWorkflowStep } from './index.js';

const check = (config: Record<string, unknown>) => validateStepConfig(callWorkflowStep, mergeStepConfig(callWorkflowStep, config));
const WORKFLOW_ID = '0190f5a2-7c1e-7a3b-9d2e-4f5a6b7c8d9e';

describe('call_workflow step', () => {
  it('accepts its default config once a workflow id is given, and waits by default', () => {
    expect(callWorkflowStep.defaultConfig).toEqual({ wait: true });
    expect(check({ workflow_id: WORKFLOW_ID })).toEqual([]);
  });

  it('takes any input, including an expression', () => {
    expect(check({ workflow_id: WORKFLOW_ID, input: '{{ trigger.body }}', wait: false })).toEqual([]);
    expect(check({ workflow_id: WORKFLOW_ID, input: { order: 1, items: [1, 2] } })).toEqual([]);
  });

  it('requires a workflow id that is a UUID', () => {
    expect(check({})).toEqual([{ pointer: '/workflow_id', detail: 'config.workflow_id is required.' }]);
    expect(check({ workflow_id: 'billing' })).toEqual([{ pointer: '/workflow_id', detail: 'config.workflow_id must be a UUID.' }]);
  });

  it('rejects a wait that is not a boolean', () => {
    expect(check({ workflow_id: WORKFLOW_ID, wait: 'yes' })).toEqual([{ pointer: '/wait', detail: 'config.wait must be a boolean.' }]);
  });
});
