import Anthropic from '@anthropic-ai/sdk';
import { withCallSignal } from './call-signal.js';
import type { ResolvedConnection } from './connection-resolver.js';
import { guardedFetch } from './guarded-fetch.js';
import { ProviderError } from './provider-error.js';
import { classifySdkError } from './sdk-errors.js';
import {
  STOP_REASONS,
  type ChatMessage,
  type ChatOptions,
  type ChatRequest,
  type ChatResponse,
  type StopReason,
  type ToolCall,
} from './chat-types.js';

type MessageParam = Anthropic.Messages.MessageParam;
type ContentBlock = Anthropic.Messages.ContentBlockParam;

/** Anthropic requires max_tokens; this is what a step without one gets. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/**
 * Our messages as Anthropic's: tool results are `tool_result` blocks of a user message, and
 * consecutive results (several tool calls in one turn) share one user message, as the API wants.
 */
function toAnthropicMessages(messages: ChatMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (const message of messages) {
    if (message.role === 'tool') {
      const block: ContentBlock = {
        type: 'tool_result',
        tool_use_id: message.toolCallId,
        content: message.content,
        ...(message.isError ? { is_error: true } : {}),
      };
      const last = out.at(-1);
      if (last && last.role === 'user' && Array.isArray(last.content) && last.content.every((b) => b.type === 'tool_result'))
        last.content.push(block);
      else out.push({ role: 'user', content: [block] });
    } else if (message.role === 'user') {
      out.push({ role: 'user', content: message.content });
    } else {
      const blocks: ContentBlock[] = [];
      if (message.content !== '') blocks.push({ type: 'text', text: message.content });
      for (const call of message.toolCalls ?? []) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: call.arguments });
      out.push({ role: 'assistant', content: blocks.length > 0 ? blocks : '' });
    }
  }
  return out;
}

/** Anthropic Messages with `tool_use` / `tool_result`. */
export async function anthropicChat(connection: ResolvedConnection, request: ChatRequest, options: ChatOptions): Promise<ChatResponse> {
  const nowMs = options.nowMs ?? Date.now;
  const client = new Anthropic({
    apiKey: connection.apiKey ?? 'none',
    ...(connection.baseUrl ? { baseURL: connection.baseUrl } : {}),
    fetch: guardedFetch(options.httpAllow),
    maxRetries: 0,
    timeout: options.timeoutMs ?? 120_000,
  });
  const system = request.jsonSchema
    ? `${request.system ? `${request.system}\n\n` : ''}Answer with one JSON value only, no prose, matching this JSON Schema:\n${JSON.stringify(request.jsonSchema)}`
    : request.system;
  let answer: Anthropic.Messages.Message;
  try {
    const params: Anthropic.Messages.MessageCreateParamsNonStreaming = {
      model: request.model,
      max_tokens: request.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
      messages: toAnthropicMessages(request.messages),
      ...(system ? { system } : {}),
      ...(request.tools && request.tools.length > 0
        ? {
            tools: request.tools.map((tool) => ({
              name: tool.name,
              description: tool.description,
              input_schema: tool.inputSchema as Anthropic.Messages.Tool.InputSchema,
            })),
          }
        : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    };
    answer = await withCallSignal(options.signal, (signal) => client.messages.create(params, signal ? { signal } : undefined));
  } catch (error) {
    throw classifySdkError(error, connection.provider, [connection.apiKey], nowMs());
  }
  if (!answer || !Array.isArray(answer.content))
    throw new ProviderError('malformed', 'anthropic answered without content blocks', { provider: connection.provider });
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of answer.content) {
    if (block.type === 'text') texts.push(block.text);
    else if (block.type === 'tool_use') {
      const input = block.input;
      const valid = typeof input === 'object' && input !== null && !Array.isArray(input);
      toolCalls.push({
        id: block.id,
        name: block.name,
        arguments: valid ? (input as Record<string, unknown>) : { _raw: input },
        ...(valid ? {} : { argumentsError: 'the arguments must be a JSON object' }),
      });
    }
  }
  const reason = answer.stop_reason as string | null;
  return {
    text: texts.join(''),
    toolCalls,
    usage: { input_tokens: answer.usage?.input_tokens ?? 0, output_tokens: answer.usage?.output_tokens ?? 0 },
    model: typeof answer.model === 'string' ? answer.model : request.model,
    stopReason: (STOP_REASONS as readonly string[]).includes(reason ?? '') ? (reason as StopReason) : 'other',
  };
}
