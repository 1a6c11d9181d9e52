import { defineStep } from '../define-step.js';

export const agentStep = defineStep({
  slug: 'agent',
  name: 'AI Agent',
  description: 'Asks a language model, optionally with tools, knowledge bases and memory.',
  docs: `Sends a prompt to a language model and passes on its answer. The model may call tools,
look things up in knowledge bases and remember earlier turns of a conversation.

**Config**

- \`prompt\` (required): the message for the model; usually holds \`{{ … }}\` expressions.
- \`system\`: the system instructions.
- \`provider\`, \`model\`: which model answers.
- \`tools\`: the tools the model may call.
- \`knowledge_base_ids\`: ids of knowledge bases to search.
- \`memory_id\`: id of a memory keeping the conversation, or null for none.
- \`session_key\`: which conversation of that memory this is, e.g.
  \`{{ trigger.body.chat_id }}\`.

**Output**

The model's answer.`,
  categories: ['understand'],
  icon: 'bot',
  iconColor: '#DB2777',
  trigger: false,
  ports: { in: ['in'], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['prompt'],
    properties: {
      provider: { type: 'string' },
      model: { type: 'string' },
      system: { type: 'string' },
      prompt: { type: 'string', minLength: 1 },
      tools: { type: 'array' },
      knowledge_base_ids: { type: 'array', items: { type: 'string', format: 'uuid' } },
      memory_id: { type: ['string', 'null'], format: 'uuid' },
      session_key: { type: 'string' },
    },
  },
  defaultConfig: { tools: [], knowledge_base_ids: [], memory_id: null },
  // The answer's shape is fixed when the agent runtime lands.
  outputSchema: null,
  sortOrder: 30,
  canvasVisible: true,
  effects: true,
});
