import { defineStep } from '../define-step.js';
import { MAX_APPROVAL_TIMEOUT_MS, MIN_APPROVAL_TIMEOUT_MS } from '../approval/index.js';

const NAME = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' };
const OBJECT_SCHEMA = { type: 'object' };
/** How long a tool call with `requires_approval` waits for a decision (approval/index.ts has the bounds and default). */
const APPROVAL_TIMEOUT = { type: 'integer', minimum: MIN_APPROVAL_TIMEOUT_MS, maximum: MAX_APPROVAL_TIMEOUT_MS };

/** A tool the model may call: another workflow, or an HTTP request. */
const TOOL = {
  type: 'object',
  required: ['type'],
  discriminator: { propertyName: 'type' },
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'name', 'description', 'workflow_id'],
      properties: {
        type: { const: 'workflow' },
        name: NAME,
        description: { type: 'string', minLength: 1 },
        workflow_id: { type: 'string', format: 'uuid' },
        input_schema: OBJECT_SCHEMA,
        requires_approval: { type: 'boolean' },
        approval_timeout_ms: APPROVAL_TIMEOUT,
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'name', 'description', 'method', 'url', 'input_schema'],
      properties: {
        type: { const: 'http' },
        name: NAME,
        description: { type: 'string', minLength: 1 },
        method: { enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] },
        url: { type: 'string', minLength: 1 },
        input_schema: OBJECT_SCHEMA,
        requires_approval: { type: 'boolean' },
        approval_timeout_ms: APPROVAL_TIMEOUT,
      },
    },
  ],
};

export const AGENT_DEFAULT_MAX_TURNS = 10;

export const agentStep = defineStep({
  slug: 'agent',
  name: 'AI Agent',
  description: 'Asks a language model, optionally with tools, knowledge bases and memory.',
  docs: `Sends a prompt to a language model and passes on its answer. The model may call tools
(other workflows, HTTP requests, knowledge search, store reads) and remember earlier turns of
a conversation. Each model turn and tool call is journaled, so a crash or retry never pays for
a completed one twice. A model call answered with a 429 or 5xx, timed out or cut off is tried
again, 3 tries in all (honouring \`Retry-After\`, at most 30 s a wait), before the step fails;
a node with its own \`retry\` policy leaves every retry to that policy instead.

**Config**

- \`connection_id\` (required to run): the connection (OpenAI, Anthropic or an
  OpenAI-compatible server) whose provider answers.
- \`model\` (required to run): the model name, e.g. \`gpt-4o-mini\`.
- \`prompt\` (required): the message for the model; usually holds \`{{ … }}\` expressions.
- \`system\`: the system instructions.
- \`tools\`: \`{type: "workflow", name, description, workflow_id, input_schema?}\` or
  \`{type: "http", name, description, method, url, input_schema}\`. A tool with
  \`requires_approval: true\` runs only once a person approves the call: the step waits
  (holding no worker) with the call's \`tool_call\` record \`waiting\`, its output holding
  \`approve_url\`, \`reject_url\`, \`expires_at\` (and \`approval\` with the message too); it is decided like an approval
  step (\`POST /api/v1/executions/{id}/steps/{record id}/decision\` or a link), within
  \`approval_timeout_ms\` (1 day by default, at most 30 days). A rejection goes back to the
  model as the tool's error text \`rejected: <comment>\` (\`rejected: \` and nothing after it
  without a comment) and is in \`tool_calls\` with \`is_error: true\`; the time-out goes back
  as the tool's error \`approval_timed_out\`.
- \`knowledge_base_ids\`: knowledge bases the \`knowledge_search\` tool searches.
- \`store_ids\`: stores the \`read_store\` tool reads.
- \`memory_id\`, \`session_key\`: the memory and the conversation in it.
- \`max_turns\` (default 10), \`temperature\`, \`max_tokens\`.
- \`response_format\`: \`"text"\` (default) or a JSON Schema the answer must match.

**Output**

\`{text, json, tool_calls, usage: {input_tokens, output_tokens}, model, stop_reason}\`.`,
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
      // Null until bound: duplicates and imports reset it (DESIGN.md "connection bindings reset").
      connection_id: { type: ['string', 'null'], format: 'uuid' },
      model: { type: 'string' },
      system: { type: 'string' },
      prompt: { type: 'string', minLength: 1 },
      tools: { type: 'array', items: TOOL },
      knowledge_base_ids: { type: 'array', items: { type: 'string', format: 'uuid' } },
      store_ids: { type: 'array', items: { type: 'string', format: 'uuid' } },
      memory_id: { type: ['string', 'null'], format: 'uuid' },
      session_key: { type: 'string' },
      max_turns: { type: 'integer', minimum: 1, maximum: 100 },
      temperature: { type: 'number', minimum: 0, maximum: 2 },
      max_tokens: { type: 'integer', minimum: 1 },
      response_format: { oneOf: [{ const: 'text' }, { type: 'object' }] },
    },
  },
  defaultConfig: {
    connection_id: null,
    tools: [],
    knowledge_base_ids: [],
    store_ids: [],
    memory_id: null,
    max_turns: AGENT_DEFAULT_MAX_TURNS,
    response_format: 'text',
  },
  outputSchema: {
    type: 'object',
    required: ['text', 'json', 'tool_calls', 'usage', 'model', 'stop_reason'],
    properties: {
      text: { type: 'string' },
      json: {},
      tool_calls: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            name: { type: 'string' },
            arguments: { type: 'object' },
            result: {},
            is_error: { type: 'boolean' },
            turn: { type: 'integer' },
          },
        },
      },
      usage: { type: 'object', properties: { input_tokens: { type: 'integer' }, output_tokens: { type: 'integer' } } },
      model: { type: 'string' },
      stop_reason: { type: 'string' },
    },
  },
  sortOrder: 30,
  canvasVisible: true,
  effects: true,
  checkConfig: (config) => {
    const names = new Set<string>();
    const issues = [];
    const tools = Array.isArray(config.tools) ? (config.tools as { name?: unknown }[]) : [];
    for (const [i, tool] of tools.entries()) {
      const name = String(tool.name);
      if (name === 'knowledge_search' || name === 'read_store')
        issues.push({ pointer: `/tools/${i}/name`, detail: `config.tools[${i}].name "${name}" is reserved for the built-in tool.` });
      else if (names.has(name))
        issues.push({ pointer: `/tools/${i}/name`, detail: `config.tools[${i}].name "${name}" is used by another tool.` });
      names.add(name);
    }
    return issues;
  },
});
