import { anthropicChat } from './anthropic-chat.js';
import type { ChatOptions, ChatRequest, ChatResponse } from './chat-types.js';
import type { ResolvedConnection } from './connection-resolver.js';
import { openAiChat } from './openai-chat.js';

/** One model turn with whichever provider the connection names; failures are ProviderErrors. */
export function chat(connection: ResolvedConnection, request: ChatRequest, options: ChatOptions): Promise<ChatResponse> {
  return connection.provider === 'anthropic' ? anthropicChat(connection, request, options) : openAiChat(connection, request, options);
}
