import { isPlainObject } from '../lib/json.js';
import { BUILTIN_DIMENSIONS, BUILTIN_EMBEDDER_KEY, builtinEmbed } from './builtin-embedder.js';
import type { ConnectionResolver } from './connection-resolver.js';
import { embedTexts } from './embeddings-client.js';

/** A knowledge base's embedder as stored and shown: the built-in one, or a connection and model. */
export type EmbedderSpec = { kind: 'builtin' } | { connection_id: string; model: string };

export const BUILTIN_EMBEDDER: EmbedderSpec = Object.freeze({ kind: 'builtin' });

/** Two specs with the same key make vectors in the same space. */
export function embedderKey(spec: EmbedderSpec): string {
  return 'kind' in spec ? BUILTIN_EMBEDDER_KEY : `connection:${spec.connection_id}:${spec.model}`;
}

export function parseEmbedderSpec(text: string): EmbedderSpec {
  const value: unknown = JSON.parse(text);
  if (isPlainObject(value) && typeof value.connection_id === 'string' && typeof value.model === 'string')
    return { connection_id: value.connection_id, model: value.model };
  return BUILTIN_EMBEDDER;
}

export interface Embedder {
  key: string;
  /** Known up front for the built-in embedder; a provider's shows in its first answer. */
  dimensions: number | null;
  /** One L2-normalised vector per text, in order. Failures are ProviderErrors. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

export interface EmbedderContext {
  resolver: ConnectionResolver;
  workspaceId: string;
  httpAllow: readonly string[];
  nowMs?: () => number;
}

/** How many texts go into one `/v1/embeddings` request. */
export const EMBEDDING_BATCH = 64;

export const builtinEmbedder: Embedder = {
  key: BUILTIN_EMBEDDER_KEY,
  dimensions: BUILTIN_DIMENSIONS,
  embed: async (texts) => texts.map(builtinEmbed),
};

export function resolveEmbedder(spec: EmbedderSpec, context: EmbedderContext): Embedder {
  if ('kind' in spec) return builtinEmbedder;
  return {
    key: embedderKey(spec),
    dimensions: null,
    embed: async (texts, signal) => {
      const connection = await context.resolver.resolve(context.workspaceId, spec.connection_id);
      const vectors: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += EMBEDDING_BATCH) {
        const batch = texts.slice(start, start + EMBEDDING_BATCH);
        const result = await embedTexts(connection, spec.model, batch, {
          httpAllow: context.httpAllow,
          ...(context.nowMs ? { nowMs: context.nowMs } : {}),
          ...(signal ? { signal } : {}),
        });
        vectors.push(...result.vectors);
      }
      return vectors;
    },
  };
}
