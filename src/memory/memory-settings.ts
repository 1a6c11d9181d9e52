import type { CompactionMode, RecallMode } from '../db/schema.js';
import type { MemoryRow } from '../store/memory-repository.js';

/**
 * A memory's settings as stored (JSON text) and used:
 * - `window`: how many messages the prompt keeps verbatim (default 20); older ones leave the
 *   window but stay stored, where semantic recall can still find them;
 * - `compaction`: what happens when the window's tokens pass `threshold_tokens` (default 4,000):
 *   `none`, `truncate` (the oldest messages leave the window until it is under the threshold)
 *   or `summarize` (a model, through `connection_id` and `model`, folds the older messages into
 *   one `summary` message that replaces them in the window);
 * - `recall`: `none`, or `semantic`: the `top_k` (default 3) stored messages outside the window
 *   most similar to the current query join the prompt (built-in embedder, no network).
 */
export interface CompactionSettings {
  mode: CompactionMode;
  threshold_tokens: number;
  connection_id?: string;
  model?: string;
}

export interface RecallSettings {
  mode: RecallMode;
  top_k: number;
}

export interface MemorySettings {
  window: number;
  compaction: CompactionSettings;
  recall: RecallSettings;
}

export const DEFAULT_WINDOW = 20;
export const DEFAULT_THRESHOLD_TOKENS = 4000;
export const DEFAULT_RECALL_TOP_K = 3;

export function settingsOf(memory: Pick<MemoryRow, 'window' | 'compaction' | 'recall'>): MemorySettings {
  return {
    window: memory.window,
    compaction: JSON.parse(memory.compaction) as CompactionSettings,
    recall: JSON.parse(memory.recall) as RecallSettings,
  };
}
