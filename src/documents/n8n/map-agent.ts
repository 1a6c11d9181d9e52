import { isPlainObject } from '../../lib/json.js';
import { UNBOUND_ID } from '../../graph/call-targets.js';
import { findStepDefinition } from '../../steps/registry.js';
import type { MapResult, NodeBinding, NodeContext } from './map-context.js';
import type { N8nNode } from './n8n-document.js';
import { workflowBinding, workflowReference } from './map-execute-workflow.js';

const PROVIDERS: Record<string, string> = {
  lmChatOpenAi: 'openai',
  lmOpenAi: 'openai',
  lmChatAzureOpenAi: 'openai',
  lmChatAnthropic: 'anthropic',
  lmChatOllama: 'openai_compatible',
  lmChatOpenRouter: 'openai_compatible',
  lmChatDeepSeek: 'openai_compatible',
  lmChatMistralCloud: 'openai_compatible',
  lmChatGroq: 'openai_compatible',
  lmChatXAiGrok: 'openai_compatible',
};

const shortType = (node: N8nNode) => node.type.split('.').pop() ?? node.type;

/**
 * The AI Agent (and the basic LLM chain, an agent without tools) with its sub-nodes folded into
 * the agent step's config (DESIGN.md): the language model gives `model` and a credentials
 * requirement naming its provider (connections are never imported: `connection_id` stays null), memory gives a `memory_id` to bind
 * and the `session_key`, workflow and HTTP tools become `tools`. Sub-nodes with no place in
 * the config (output parsers, vector stores, code tools) are left to become placeholders.
 * Fields the agent step of this release does not take are dropped and listed.
 */
export function mapAgent(ctx: NodeContext): MapResult {
  const chain = ctx.node.type.endsWith('.chainLlm');
  const options = isPlainObject(ctx.param('options')) ? (ctx.param('options') as Record<string, unknown>) : {};
  // Exports leave defaults out: a prompt that is there was written; "auto" takes the chat trigger's message.
  const text = ctx.param('text', chain ? ctx.param('prompt') : undefined);
  const promptType = ctx.param('promptType', text === undefined ? 'auto' : 'define');
  const prompt = promptType !== 'auto' ? ctx.translate(text ?? '', '/prompt') : '{{ input.chatInput }}';
  // No connection_id: it is never imported (the credentials requirement names the provider).
  const config: Record<string, unknown> = {
    prompt: prompt === '' ? '{{ input.chatInput }}' : prompt,
    tools: [],
    knowledge_base_ids: [],
    memory_id: null,
  };
  if (typeof options.systemMessage === 'string') config.system = ctx.translate(options.systemMessage, '/system');
  if (typeof options.maxIterations === 'number') config.max_turns = options.maxIterations;
  const absorbed: string[] = [];
  const bindings: NodeBinding[] = [];

  const models = ctx.subNodes.get('ai_languageModel') ?? [];
  const model = models[0];
  if (model === undefined) {
    ctx.note('credentials', '/connection_id', 'the n8n agent had no language model attached: choose a connection and a model');
  } else {
    absorbed.push(model.name);
    const provider = PROVIDERS[shortType(model)];
    const name = model.parameters.model;
    const modelName = isPlainObject(name) ? name.value : (name ?? model.parameters.modelName);
    if (typeof modelName === 'string' && !modelName.startsWith('=')) config.model = modelName;
    const modelOptions = isPlainObject(model.parameters.options) ? model.parameters.options : {};
    if (typeof modelOptions.temperature === 'number') config.temperature = modelOptions.temperature;
    if (typeof modelOptions.maxTokens === 'number') config.max_tokens = modelOptions.maxTokens;
    const credential = Object.entries(model.credentials)[0];
    const credentialName =
      credential === undefined
        ? null
        : typeof credential[1] === 'string'
          ? credential[1]
          : isPlainObject(credential[1]) && typeof credential[1].name === 'string'
            ? credential[1].name
            : null;
    ctx.note(
      'credentials',
      '/connection_id',
      `the model ${shortType(model)}${credentialName ? ` used the n8n credential "${credentialName}"` : ''}; connections are never imported: choose a connection${provider ? ` for ${provider}` : ''}`,
      {
        provider: provider ?? null,
        credential_type: credential?.[0] ?? null,
        credential_name: credentialName,
        sub_node: model.name,
      },
    );
    if (provider === undefined || provider === 'openai_compatible') {
      ctx.note('provider_keys', '/connection_id', `${shortType(model)} needs an OpenAI-compatible connection with its base URL and key`, {
        sub_node: model.name,
      });
    }
    if (models.length > 1) ctx.note('expressions', '/model', 'the n8n agent had a fallback model; one model is kept');
    absorbed.push(...models.slice(1).map((m) => m.name));
  }

  const memory = (ctx.subNodes.get('ai_memory') ?? [])[0];
  if (memory !== undefined && !chain) {
    absorbed.push(memory.name);
    config.memory_id = UNBOUND_ID;
    const window = typeof memory.parameters.contextWindowLength === 'number' ? memory.parameters.contextWindowLength : 5;
    bindings.push({
      path: '/memory_id',
      resource: 'memory',
      by: null,
      detail: `n8n kept the last ${window} exchanges in ${shortType(memory)}: create a memory and choose it`,
      facts: { window, sub_node: memory.name },
    });
    const sessionType = memory.parameters.sessionIdType ?? 'fromInput';
    config.session_key =
      sessionType === 'customKey'
        ? ctx.contextFor(memory).translate(String(memory.parameters.sessionKey ?? ''), '/session_key')
        : '{{ input.sessionId }}';
  }

  const tools: unknown[] = [];
  for (const tool of ctx.subNodes.get('ai_tool') ?? []) {
    const mapped = mapTool(ctx, tool, tools.length, bindings);
    if (mapped === null) continue;
    tools.push(mapped);
    absorbed.push(tool.name);
  }
  config.tools = tools;
  const fitted = fitToStep('agent', config);
  for (const field of fitted.dropped)
    ctx.note(
      'expressions',
      `/${field}`,
      `the agent step of this release has no "${field}"; the n8n value was ${JSON.stringify(config[field])}`,
    );
  return { type: 'agent', config: fitted.config, bindings, notes: [...ctx.notes], absorbed };
}

/** A workflow tool or an HTTP tool in the agent step's tool shape; null for tools it cannot describe. */
function mapTool(ctx: NodeContext, tool: N8nNode, index: number, bindings: NodeBinding[]): Record<string, unknown> | null {
  const type = shortType(tool);
  const p = tool.parameters;
  const name = typeof p.name === 'string' && p.name !== '' ? p.name : tool.name.toLowerCase().replace(/[^a-z0-9]+/g, '_');
  const description = String(p.description ?? p.toolDescription ?? tool.name).replace(/^=/, '');
  if (type === 'toolWorkflow') {
    if ((p.source ?? 'database') !== 'database') return null;
    bindings.push(workflowBinding(workflowReference(p.workflowId, ctx.workflow.id), `/tools/${index}/workflow_id`));
    // n8n adds these fields to what the called workflow receives; a workflow tool here passes
    // only the arguments the model sends, so a workflow reading them must be changed.
    const fields =
      isPlainObject(p.fields) && Array.isArray(p.fields.values)
        ? p.fields.values
            .filter(isPlainObject)
            .map((f) => f.name)
            .filter((n): n is string => typeof n === 'string')
        : [];
    if (fields.length > 0) {
      ctx.note(
        'expressions',
        `/tools/${index}`,
        `the n8n tool "${tool.name}" also passed ${fields.map((f) => `"${f}"`).join(', ')} to the workflow; this tool passes only the arguments the model sends: change the called workflow if it reads them`,
        { sub_node: tool.name, fields },
      );
    }
    return { type: 'workflow', name, description, workflow_id: UNBOUND_ID };
  }
  if (type === 'toolHttpRequest' || type === 'httpRequestTool') {
    const url = p.url;
    if (typeof url !== 'string') return null;
    return {
      type: 'http',
      name,
      description,
      method: String(p.method ?? 'GET').toUpperCase(),
      url: ctx.contextFor(tool).translate(url, `/tools/${index}/url`),
      input_schema: { type: 'object' },
    };
  }
  return null;
}

/** Keeps the config fields the step's schema declares (the agent step grows in another branch). */
function fitToStep(slug: string, config: Record<string, unknown>): { config: Record<string, unknown>; dropped: string[] } {
  const properties = findStepDefinition(slug)?.configSchema.properties;
  if (!isPlainObject(properties)) return { config, dropped: [] };
  const kept: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(config)) {
    if (Object.hasOwn(properties, key)) kept[key] = value;
    else dropped.push(key);
  }
  return { config: kept, dropped };
}
