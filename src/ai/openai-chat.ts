import OpenAI from 'openai';
import { withCallSignal } from './call-signal.js';
import type { ResolvedConnection } from './connection-resolver.js';
import { OPENAI_BASE_URL } from './embeddings-client.js';
import { guardedFetch } from './guarded-fetch.js';
import { ProviderError } from './provider-error.js';
import { classifySdkError } from './sdk-errors.js';
import type { ChatMessage, ChatOptions, ChatRequest, ChatResponse, StopReason, ToolCall } from './chat-types.js';

type Params = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

function toOpenAiMessages(system: string | undefined, messages: ChatMessage[]): Message[] {
  const out: Message[] = system ? [{ role: 'system', content: system }] : [];
  for (const message of messages) {
    if (message.role === 'user') out.push({ role: 'user', content: message.content });
    else if (message.role === 'tool') out.push({ role: 'tool', tool_call_id: message.toolCallId, content: message.content });
    else {
      const calls = message.toolCalls ?? [];
      out.push({
        role: 'assistant',
        content: message.content === '' && calls.length > 0 ? null : message.content,
        ...(calls.length > 0
          ? {
              tool_calls: calls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: JSON.stringify(call.arguments) },
              })),
            }
          : {}),
      });
    }
  }
  return out;
}

const FINISH_REASONS: Record<string, StopReason> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
};

/** Tool arguments arrive as JSON text; a model may send broken JSON, which goes back to it as a tool error. */
export function parseToolArguments(text: string | undefined): Pick<ToolCall, 'arguments' | 'argumentsError'> {
  if (text === undefined || text.trim() === '') return { arguments: {} };
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return { arguments: value as Record<string, unknown> };
    return { arguments: { _raw: text }, argumentsError: 'the arguments must be a JSON object' };
  } catch {
    return { arguments: { _raw: text }, argumentsError: 'the arguments are not valid JSON' };
  }
}

/** OpenAI Chat Completions with tools (also OpenAI-compatible servers through their base URL). */
export async function openAiChat(connection: ResolvedConnection, request: ChatRequest, options: ChatOptions): Promise<ChatResponse> {
  const nowMs = options.nowMs ?? Date.now;
  const client = new OpenAI({
    apiKey: connection.apiKey ?? 'none',
    baseURL: connection.baseUrl ?? OPENAI_BASE_URL,
    fetch: guardedFetch(options.httpAllow),
    maxRetries: 0,
    timeout: options.timeoutMs ?? 120_000,
  });
  const params: Params = {
    model: request.model,
    messages: toOpenAiMessages(request.system, request.messages),
    ...(request.tools && request.tools.length > 0
      ? {
          tools: request.tools.map((tool) => ({
            type: 'function' as const,
            function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
          })),
        }
      : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
    ...(request.jsonSchema
      ? { response_format: { type: 'json_schema' as const, json_schema: { name: 'answer', schema: request.jsonSchema } } }
      : {}),
  };
  let completion: OpenAI.Chat.Completions.ChatCompletion;
  try {
    completion = await withCallSignal(options.signal, (signal) => client.chat.completions.create(params, signal ? { signal } : undefined));
  } catch (error) {
    throw classifySdkError(error, connection.provider, [connection.apiKey], nowMs());
  }
  const choice = Array.isArray(completion?.choices) ? completion.choices[0] : undefined;
  const message = choice?.message;
  if (!message || typeof message !== 'object')
    throw new ProviderError('malformed', `${connection.provider} answered without a message (no choices[0].message)`, {
      provider: connection.provider,
    });
  const toolCalls: ToolCall[] = [];
  for (const call of message.tool_calls ?? []) {
    if (call.type !== 'function' || typeof call.function?.name !== 'string')
      throw new ProviderError('malformed', `${connection.provider} answered a tool call without a function name`, {
        provider: connection.provider,
      });
    toolCalls.push({
      id: typeof call.id === 'string' && call.id ? call.id : `call_${toolCalls.length}`,
      name: call.function.name,
      ...parseToolArguments(call.function.arguments),
    });
  }
  const usage = completion.usage;
  return {
    text: typeof message.content === 'string' ? message.content : '',
    toolCalls,
    usage: { input_tokens: usage?.prompt_tokens ?? 0, output_tokens: usage?.completion_tokens ?? 0 },
    model: typeof completion.model === 'string' ? completion.model : request.model,
    stopReason: toolCalls.length > 0 ? 'tool_use' : (FINISH_REASONS[choice?.finish_reason ?? ''] ?? 'other'),
  };
}
