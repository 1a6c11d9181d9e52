import { describe, expect, it } from 'vitest';
import { mergeStepConfig, validateStepConfig } from '../validate-step-config.js';
import { agentStep } from './index.js';

const check = (config: Record<string, unknown>) => validateStepConfig(agentStep, mergeStepConfig(agentStep, config));
const KB_ID = '0190f5a2-7c1e-7a3b-9d2e-4f5a6b7c8d9e';

describe('agent step', () => {
  it('accepts its default config once a prompt is given', () => {
    expect(check({ prompt: 'Summarise {{ trigger.body.text }}' })).toEqual([]);
  });

  it('requires a prompt', () => {
    expect(check({})).toEqual([{ pointer: '/prompt', detail: 'config.prompt is required.' }]);
  });

  it('accepts every documented field', () => {
    expect(
      check({
        provider: 'openai',
        model: 'gpt-4o-mini',
        system: 'You answer support mail.',
        prompt: '{{ trigger.body.text }}',
        tools: [],
        knowledge_base_ids: [KB_ID],
        memory_id: KB_ID,
        session_key: '{{ trigger.body.chat_id }}',
      }),
    ).toEqual([]);
  });

  it('rejects ids that are not UUIDs and tools that are not a list', () => {
    expect(check({ prompt: 'Hi', knowledge_base_ids: [KB_ID, 'kb-1'], memory_id: 'mem-1', tools: 'search' })).toEqual([
      { pointer: '/tools', detail: 'config.tools must be an array.' },
      { pointer: '/knowledge_base_ids/1', detail: 'config.knowledge_base_ids[1] must be a UUID.' },
      { pointer: '/memory_id', detail: 'config.memory_id must be a UUID.' },
    ]);
  });
});
