import OpenAI from 'openai';
import { withCallSignal } from './call-signal.js';
import { guardedFetch } from './guarded-fetch.js';
import type { ResolvedConnection } from './connection-resolver.js';
import { ProviderError } from './provider-error.js';
import { classifySdkError } from './sdk-errors.js';

export interface EmbeddingResult {
  vectors: Float32Array[];
  /** Tokens the provider counted, when it said. */
  inputTokens: number | null;
}

export interface EmbeddingsOptions {
  httpAllow: readonly string[];
  timeoutMs?: number;
  nowMs?: () => number;
  signal?: AbortSignal;
}

/** OpenAI's API root: an `openai` connection without a base URL, or its override. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * `/v1/embeddings` of OpenAI and OpenAI-compatible servers (Ollama, vLLM, LM Studio, llama.cpp,
 * …), through the official SDK with a guarded fetch and no SDK retries. Vectors come back
 * L2-normalised, so cosine similarity and dot product agree whatever the server returns.
 */
export async function embedTexts(
  connection: ResolvedConnection,
  model: string,
  texts: string[],
  options: EmbeddingsOptions,
): Promise<EmbeddingResult> {
  if (connection.provider === 'anthropic')
    throw new ProviderError('rejected', 'anthropic connections have no embeddings endpoint; use an openai or openai_compatible connection');
  const nowMs = options.nowMs ?? Date.now;
  const client = new OpenAI({
    apiKey: connection.apiKey ?? 'none',
    baseURL: connection.baseUrl ?? OPENAI_BASE_URL,
    fetch: guardedFetch(options.httpAllow),
    maxRetries: 0,
    timeout: options.timeoutMs ?? 60_000,
  });
  let response: OpenAI.Embeddings.CreateEmbeddingResponse;
  try {
    response = await withCallSignal(options.signal, (signal) =>
      client.embeddings.create({ model, input: texts, encoding_format: 'float' }, signal ? { signal } : undefined),
    );
  } catch (error) {
    throw classifySdkError(error, connection.provider, [connection.apiKey], nowMs());
  }
  const data = Array.isArray(response?.data) ? response.data : null;
  if (!data || data.length !== texts.length)
    throw new ProviderError('malformed', `${connection.provider} answered ${data?.length ?? 'no'} embeddings for ${texts.length} inputs`, {
      provider: connection.provider,
    });
  const vectors: Float32Array[] = new Array(texts.length);
  let dimensions: number | null = null;
  for (const [position, item] of data.entries()) {
    const index = typeof item.index === 'number' ? item.index : position;
    const values = item.embedding as unknown;
    if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'number' && Number.isFinite(v))) {
      throw new ProviderError('malformed', `${connection.provider} answered an embedding that is not an array of numbers`, {
        provider: connection.provider,
      });
    }
    if (dimensions !== null && values.length !== dimensions)
      throw new ProviderError('malformed', `${connection.provider} answered embeddings of different lengths`, {
        provider: connection.provider,
      });
    dimensions = values.length;
    if (index < 0 || index >= texts.length)
      throw new ProviderError('malformed', `${connection.provider} answered an embedding for input ${index}`, {
        provider: connection.provider,
      });
    vectors[index] = normalize(Float32Array.from(values as number[]));
  }
  const usage = response.usage as { prompt_tokens?: unknown } | undefined;
  return { vectors, inputTokens: typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : null };
}

export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm;
  return vector;
}
