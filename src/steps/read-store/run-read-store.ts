import { isPlainObject } from '../../lib/json.js';
import { describe, invalidConfig, storesOf } from '../save-to-store/run-save-to-store.js';
import type { StepRuntime } from '../step-runtime.js';
import { READ_STORE_MAX_LIMIT } from './index.js';

/**
 * read_store: one row by key (its attributes, or null) or a filtered list (`{rows, count}`);
 * reads only, so it is a pure step for the engine.
 */
export const runReadStore: StepRuntime = async (context) => {
  const stores = storesOf(context);
  const { config } = context;
  const workspaceId = context.execution.workspaceId;
  const storeId = String(config.store_id);
  if (config.key !== undefined) {
    if (typeof config.key !== 'string')
      throw invalidConfig(context, 'key', `config.key must yield a string; it gave ${describe(config.key)}`);
    if (config.filter !== undefined) throw invalidConfig(context, 'filter', 'config.filter applies to lists: give either key or filter');
    // DESIGN.md: the row resource's attributes, or null (a condition tests `nodes.read.output`).
    return { output: await stores.get({ workspaceId, storeId, key: config.key }) };
  }
  const limit = config.limit ?? 100;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > READ_STORE_MAX_LIMIT) {
    throw invalidConfig(context, 'limit', `config.limit must be an integer from 1 to ${READ_STORE_MAX_LIMIT}`);
  }
  if (config.filter !== undefined && !isPlainObject(config.filter))
    throw invalidConfig(context, 'filter', `config.filter must yield an object; it gave ${describe(config.filter)}`);
  const rows = await stores.list({ workspaceId, storeId, limit, ...(config.filter !== undefined ? { filter: config.filter } : {}) });
  return { output: { rows, count: rows.length } };
};
