import { describe, expect, it } from 'vitest';
import { mergeStepConfig, validateStepConfig } from '../validate-step-config.js';
import { agentStep } from './index.js';

const check = (config: Record<string, unknown>) =>
  validateStepConfig(agentStep, mergeStepConfig(agentStep, config)).concat(
    agentStep.checkConfig?.(mergeStepConfig(agentStep, config)) ?? [],
  );
const ID = '0190f5a2-7c1e-7a3b-9d2e-4f5a6b7c8d9e';

describe('agent step', () => {
  it('accepts its default config once a prompt is given (the connection is bound later)', () => {
    expect(check({ prompt: 'Summarise {{ trigger.body.text }}' })).toEqual([]);
    expect(agentStep.defaultConfig).toMatchObject({ connection_id: null, max_turns: 10, response_format: 'text' });
  });

  it('requires a prompt', () => {
    expect(check({})).toEqual([{ pointer: '/prompt', detail: 'config.prompt is required.' }]);
  });

  it('accepts every documented field', () => {
    expect(
      check({
        connection_id: ID,
        model: 'gpt-4o-mini',
        system: 'You answer support mail.',
        prompt: '{{ trigger.body.text }}',
        tools: [
          { type: 'workflow', name: 'lookup_order', description: 'Finds an order', workflow_id: ID },
          {
            type: 'http',
            name: 'weather',
            description: 'Weather by city',
            method: 'GET',
            url: 'https://api.example.test/weather',
            input_schema: { type: 'object' },
          },
        ],
        knowledge_base_ids: [ID],
        store_ids: [ID],
        memory_id: ID,
        session_key: '{{ trigger.body.chat_id }}',
        max_turns: 4,
        temperature: 0.2,
        max_tokens: 500,
        response_format: { type: 'object', required: ['answer'] },
      }),
    ).toEqual([]);
  });

  it('rejects the old provider field, ids that are not UUIDs, incomplete tools and reused tool names', () => {
    const issues = check({
      prompt: 'Hi',
      provider: 'openai',
      knowledge_base_ids: [ID, 'kb-1'],
      memory_id: 'mem-1',
      tools: [
        { type: 'http', name: 'weather', description: 'Weather', url: 'https://x.test' },
        { type: 'workflow', name: 'knowledge_search', description: 'Mine', workflow_id: ID },
      ],
    });
    expect(issues.map((issue) => issue.pointer)).toEqual([
      '/provider',
      '/tools/0/method',
      '/tools/0/input_schema',
      '/knowledge_base_ids/1',
      '/memory_id',
      '/tools/1/name',
    ]);
    expect(issues.at(-1)!.detail).toBe('config.tools[1].name "knowledge_search" is reserved for the built-in tool.');
  });
});
