import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { builtinEmbed } from '../../src/ai/builtin-embedder.js';

/**
 * A real HTTP server on 127.0.0.1 speaking three wire protocols, for tests that drive our code
 * through the official SDKs:
 * - OpenAI Chat Completions: `POST /v1/chat/completions`
 * - OpenAI embeddings: `POST /v1/embeddings`
 * - Anthropic Messages: `POST /v1/messages`
 *
 * Each endpoint answers from a per-test script (a queue of answers: a status, headers and a
 * JSON body, or raw text for malformed answers); with an empty queue it answers a default
 * (embeddings: the built-in embedder's vectors of the inputs; chat: "ok"). Every request is
 * recorded with its headers and parsed body. `freePort()` names a port where nothing listens
 * yet, for a provider that refuses connections until it is started there.
 */
export type Endpoint = 'chat' | 'embeddings' | 'messages';

export interface ScriptedAnswer {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Sent as is instead of `body` (malformed JSON). */
  raw?: string;
  /** Never answers (a hung provider); the socket is destroyed when the server closes. */
  hang?: boolean;
}

export interface RecordedRequest {
  endpoint: Endpoint;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface FakeProvider {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** The OpenAI-style API root: `<origin>/v1`. */
  openAiBase: string;
  requests: RecordedRequest[];
  /** Queues answers for an endpoint, used in order. */
  script(endpoint: Endpoint, ...answers: (ScriptedAnswer | ((request: RecordedRequest) => ScriptedAnswer))[]): void;
  /** Requests received on one endpoint. */
  received(endpoint: Endpoint): RecordedRequest[];
  reset(): void;
  close(): Promise<void>;
}

const ENDPOINTS: Record<string, Endpoint> = { '/v1/chat/completions': 'chat', '/v1/embeddings': 'embeddings', '/v1/messages': 'messages' };

/** A Chat Completions answer with text and/or tool calls. */
export function openAiCompletion(options: {
  text?: string | null;
  toolCalls?: { id: string; name: string; arguments: unknown }[];
  model?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  finishReason?: string;
}): unknown {
  const toolCalls = options.toolCalls ?? [];
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: options.model ?? 'fake-model',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: options.text === undefined ? (toolCalls.length > 0 ? null : 'ok') : options.text,
          ...(toolCalls.length > 0
            ? {
                tool_calls: toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: {
                    name: call.name,
                    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
                  },
                })),
              }
            : {}),
        },
        finish_reason: options.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
      },
    ],
    usage: { ...(options.usage ?? { prompt_tokens: 10, completion_tokens: 5 }), total_tokens: 15 },
  };
}

/** An Anthropic Messages answer with text and/or tool_use blocks. */
export function anthropicMessage(options: {
  text?: string;
  toolUses?: { id: string; name: string; input: unknown }[];
  model?: string;
  usage?: { input_tokens: number; output_tokens: number };
  stopReason?: string;
}): unknown {
  const toolUses = options.toolUses ?? [];
  return {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model: options.model ?? 'claude-fake',
    content: [
      ...(options.text !== undefined || toolUses.length === 0 ? [{ type: 'text', text: options.text ?? 'ok' }] : []),
      ...toolUses.map((use) => ({ type: 'tool_use', id: use.id, name: use.name, input: use.input })),
    ],
    stop_reason: options.stopReason ?? (toolUses.length > 0 ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage: options.usage ?? { input_tokens: 12, output_tokens: 6 },
  };
}

/** An embeddings answer: the built-in embedder's vectors (meaningful similarity without a model). */
export function embeddingsAnswer(inputs: string[], model = 'fake-embedder'): unknown {
  return {
    object: 'list',
    data: inputs.map((input, index) => ({ object: 'embedding', index, embedding: Array.from(builtinEmbed(input)) })),
    model,
    usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
  };
}

function defaultAnswer(request: RecordedRequest): ScriptedAnswer {
  if (request.endpoint === 'embeddings') {
    const input = request.body?.input;
    return { body: embeddingsAnswer(Array.isArray(input) ? input : [String(input)], request.body?.model) };
  }
  if (request.endpoint === 'messages') return { body: anthropicMessage({ text: 'ok', model: request.body?.model }) };
  return { body: openAiCompletion({ text: 'ok', model: request.body?.model }) };
}

/** `port`: listen there (a test that first finds the port refusing connections); default any free port. */
export async function startFakeProvider(options: { port?: number } = {}): Promise<FakeProvider> {
  const requests: RecordedRequest[] = [];
  const queues = new Map<Endpoint, (ScriptedAnswer | ((request: RecordedRequest) => ScriptedAnswer))[]>();
  const hung = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      const endpoint = ENDPOINTS[path];
      if (!endpoint || req.method !== 'POST') {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }));
        return;
      }
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
      const request: RecordedRequest = { endpoint, path, headers: req.headers, body };
      requests.push(request);
      const next = queues.get(endpoint)?.shift();
      const answer = next === undefined ? defaultAnswer(request) : typeof next === 'function' ? next(request) : next;
      if (answer.hang) {
        hung.add(res);
        return;
      }
      const headers = { 'content-type': 'application/json', ...(answer.headers ?? {}) };
      res.writeHead(answer.status ?? 200, headers).end(answer.raw ?? JSON.stringify(answer.body ?? defaultAnswer(request).body));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    openAiBase: `${origin}/v1`,
    requests,
    script(endpoint, ...answers) {
      const queue = queues.get(endpoint) ?? [];
      queue.push(...answers);
      queues.set(endpoint, queue);
    },
    received: (endpoint) => requests.filter((request) => request.endpoint === endpoint),
    reset() {
      requests.length = 0;
      queues.clear();
    },
    close: async () => {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port of 127.0.0.1 that nothing listens on (taken from the OS, then let go): connections to it are refused. */
export async function freePort(): Promise<number> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
