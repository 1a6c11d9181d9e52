import type { ChatMessage } from '../../ai/chat-types.js';
import type { AgentMemoryContext } from './agent-resources.js';

/**
 * The system text and the opening messages of a run: the configured system instructions, the
 * session's summary and recalled messages as context, the window as earlier turns, and the
 * prompt. Only user and assistant messages of the window become turns; both providers require
 * a conversation of those two roles.
 */
export function openingMessages(
  system: string | undefined,
  memory: AgentMemoryContext | null,
  prompt: string,
): { system: string | undefined; messages: ChatMessage[] } {
  const parts: string[] = system ? [system] : [];
  if (memory?.summary) parts.push(`Summary of the earlier conversation:\n${memory.summary}`);
  if (memory && memory.recalled.length > 0) {
    parts.push(
      `Earlier messages of this conversation that may be relevant:\n${memory.recalled.map((m) => `- ${m.role}: ${m.content}`).join('\n')}`,
    );
  }
  const messages: ChatMessage[] = [];
  for (const message of memory?.messages ?? []) {
    if (message.role === 'user' || message.role === 'assistant') messages.push({ role: message.role, content: message.content });
  }
  messages.push({ role: 'user', content: prompt });
  return { system: parts.length > 0 ? parts.join('\n\n') : undefined, messages };
}

/** An answer's JSON: the whole text, or the inside of one fenced code block. */
export function parseJsonAnswer(text: string): { value: unknown } | { error: string } {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/.exec(trimmed);
  try {
    return { value: JSON.parse(fenced ? fenced[1]! : trimmed) };
  } catch {
    return { error: 'the answer is not valid JSON' };
  }
}

/** What the model is told when its answer broke the response schema (once per run). */
export function fixRequest(problem: string): string {
  return `Your answer does not match the required JSON Schema: ${problem}. Answer again with one JSON value only, no prose, that matches the schema.`;
}
