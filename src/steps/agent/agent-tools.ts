import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { ToolCall, ToolSpec } from '../../ai/chat-types.js';
import { StepError } from '../../engine/step-errors.js';
import { runHttp } from '../http/run-http.js';
import type { StepRunContext } from '../step-runtime.js';
import type { AgentResources } from './agent-resources.js';

/** A workflow or HTTP tool as the config declares it. */
export type ConfiguredTool = (
  | { type: 'workflow'; name: string; description: string; workflow_id: string; input_schema?: Record<string, unknown> }
  | { type: 'http'; name: string; description: string; method: string; url: string; input_schema: Record<string, unknown> }
) & { requires_approval?: boolean; approval_timeout_ms?: number };

/** A tool ready for a turn: what the model is told, and how a call of it runs. */
export interface AgentTool {
  spec: ToolSpec;
  type: 'workflow' | 'http' | 'knowledge_search' | 'read_store';
  configured: ConfiguredTool | null;
}

/** A tool call's answer for the model: `isError` results go back as tool errors, never step failures. */
export interface ToolOutcome {
  result: unknown;
  isError: boolean;
}

const ANY_OBJECT = { type: 'object' };
const KNOWLEDGE_TOP_K = 5;
const STORE_LIST_LIMIT = 20;

// Schemas come from configs and callee samples; a compiled validator per distinct schema text.
const ajv = new Ajv2020({ allErrors: true, strict: false });
const validators = new Map<string, ValidateFunction>();

function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(key, validate);
  }
  return validate;
}

/** Whether a value matches a JSON Schema; the errors as one sentence for the model otherwise. */
export function checkAgainst(schema: Record<string, unknown>, value: unknown): string | null {
  let validate: ValidateFunction;
  try {
    validate = validatorFor(schema);
  } catch (error) {
    return `the schema cannot be compiled: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (validate(value)) return null;
  return (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`).join('; ');
}

/**
 * The tools of one run: the configured ones (a workflow tool's schema declared, else inferred
 * from the callee's trigger sample), then `knowledge_search` and `read_store` when the config
 * names knowledge bases or stores.
 */
export async function buildTools(config: Record<string, unknown>, resources: AgentResources, workspaceId: string): Promise<AgentTool[]> {
  const tools: AgentTool[] = [];
  for (const tool of (config.tools ?? []) as ConfiguredTool[]) {
    let schema = tool.input_schema;
    if (!schema && tool.type === 'workflow') schema = (await resources.workflowInputSchema(workspaceId, tool.workflow_id)) ?? ANY_OBJECT;
    tools.push({
      spec: { name: tool.name, description: tool.description, inputSchema: schema ?? ANY_OBJECT },
      type: tool.type,
      configured: tool,
    });
  }
  const bases = (config.knowledge_base_ids ?? []) as string[];
  if (bases.length > 0) {
    tools.push({
      type: 'knowledge_search',
      configured: null,
      spec: {
        name: 'knowledge_search',
        description:
          'Searches the knowledge bases for passages relevant to a query; answers the best passages with their document titles and headings.',
        inputSchema: {
          type: 'object',
          additionalProperties: false,
          required: ['query'],
          properties: { query: { type: 'string', minLength: 1 }, top_k: { type: 'integer', minimum: 1, maximum: 20 } },
        },
      },
    });
  }
  const stores = (config.store_ids ?? []) as string[];
  if (stores.length > 0) {
    tools.push({
      type: 'read_store',
      configured: null,
      spec: {
        name: 'read_store',
        description: 'Reads a data store: one row by its key, or without a key a list of rows.',
        inputSchema: {
          type: 'object',
          additionalProperties: false,
          required: ['store_id'],
          properties: {
            store_id: { enum: stores },
            key: { type: 'string', minLength: 1 },
            limit: { type: 'integer', minimum: 1, maximum: 100 },
          },
        },
      },
    });
  }
  return tools;
}

function failureMessage(error: unknown): { code: string; message: string } {
  if (error instanceof StepError) return { code: error.code, message: error.message };
  return { code: 'tool_failed', message: error instanceof Error ? error.message : String(error) };
}

/**
 * Runs one tool call other than a workflow tool (which the runtime runs as a child execution,
 * journaled before it starts). Unknown tools, arguments that break the schema and failures
 * answer an error result the model can read and act on.
 */
export async function checkCall(tools: AgentTool[], call: ToolCall): Promise<{ tool: AgentTool } | ToolOutcome> {
  const tool = tools.find((t) => t.spec.name === call.name);
  if (!tool)
    return {
      isError: true,
      result: {
        code: 'unknown_tool',
        message: `there is no tool named "${call.name}"; the tools are: ${tools.map((t) => t.spec.name).join(', ') || 'none'}`,
      },
    };
  if (call.argumentsError)
    return { isError: true, result: { code: 'invalid_arguments', message: `the arguments of ${call.name}: ${call.argumentsError}` } };
  const problem = checkAgainst(tool.spec.inputSchema, call.arguments);
  if (problem !== null)
    return {
      isError: true,
      result: { code: 'invalid_arguments', message: `the arguments of ${call.name} do not match its input schema: ${problem}` },
    };
  return { tool };
}

/** Runs an http, knowledge_search or read_store call whose arguments passed the schema. */
export async function runDirectTool(
  tool: AgentTool,
  call: ToolCall,
  context: StepRunContext,
  resources: AgentResources,
): Promise<ToolOutcome> {
  const { workspaceId } = context.execution;
  try {
    if (tool.type === 'knowledge_search') {
      const topK = typeof call.arguments.top_k === 'number' ? call.arguments.top_k : KNOWLEDGE_TOP_K;
      const hits = await resources.searchKnowledge(
        workspaceId,
        (context.config.knowledge_base_ids ?? []) as string[],
        String(call.arguments.query),
        topK,
      );
      return { isError: false, result: { results: hits } };
    }
    if (tool.type === 'read_store') {
      const key = typeof call.arguments.key === 'string' ? call.arguments.key : undefined;
      const limit = typeof call.arguments.limit === 'number' ? call.arguments.limit : STORE_LIST_LIMIT;
      return {
        isError: false,
        result: await resources.readStore(workspaceId, String(call.arguments.store_id), key === undefined ? { limit } : { key }),
      };
    }
    const configured = tool.configured as Extract<ConfiguredTool, { type: 'http' }>;
    const method = configured.method.toUpperCase();
    const sendsBody = method !== 'GET' && method !== 'DELETE';
    const query = sendsBody
      ? undefined
      : Object.fromEntries(Object.entries(call.arguments).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
    const request: Record<string, unknown> = { method, url: configured.url };
    if (query) request.query = query;
    if (sendsBody) request.body = call.arguments;
    const answer = await runHttp(Object.assign({}, context, { config: request }));
    return { isError: false, result: answer.output };
  } catch (error) {
    return { isError: true, result: failureMessage(error) };
  }
}
