/**
 * One shape for conversations with any provider (OpenAI Chat Completions, Anthropic Messages,
 * OpenAI-compatible servers). The agent step and memory compaction speak only this.
 *
 * Terminology: a *turn* is one request and its answer; a *tool call* is the model asking to run
 * a tool with arguments; a *tool result* answers one call by id.
 */
export interface ToolCall {
  id: string;
  name: string;
  /** The parsed arguments; `{}` when the model sent none. Malformed JSON arrives as `{ _raw: text }` with `argumentsError` set. */
  arguments: Record<string, unknown>;
  argumentsError?: string;
}

export type ChatMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string; isError?: boolean };

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  inputSchema: Record<string, unknown>;
}

export interface ChatRequest {
  model: string;
  system?: string;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  temperature?: number;
  maxTokens?: number;
  /** Ask for a JSON answer matching this schema (OpenAI: json_schema response format; Anthropic: an instruction). */
  jsonSchema?: Record<string, unknown>;
}

/** Why the model stopped, in Anthropic's words (OpenAI's finish reasons map onto them). */
export const STOP_REASONS = ['end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'refusal', 'other'] as const;
export type StopReason = (typeof STOP_REASONS)[number];

export interface ChatUsage {
  input_tokens: number;
  output_tokens: number;
}

export interface ChatResponse {
  text: string;
  toolCalls: ToolCall[];
  usage: ChatUsage;
  /** The model that answered, as the provider names it. */
  model: string;
  stopReason: StopReason;
}

export interface ChatOptions {
  httpAllow: readonly string[];
  timeoutMs?: number;
  signal?: AbortSignal;
  nowMs?: () => number;
}
