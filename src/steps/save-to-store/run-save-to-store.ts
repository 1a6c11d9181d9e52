import { NonRetriableError } from '../../engine/step-errors.js';
import type { StepRunContext, StepRuntime, StepStoreAccess } from '../step-runtime.js';
import { STORE_STEP_MODES } from './index.js';

type Mode = (typeof STORE_STEP_MODES)[number];

/**
 * save_to_store: the write is not made here but returned as the step's effect, which the engine
 * commits in the transaction that records the step completed (see StepEffect). Everything that
 * can be checked without the store (mode, key type) fails here already; the row itself is
 * validated under the store's lock when the effect runs.
 */
export const runSaveToStore: StepRuntime = async (context) => {
  const stores = storesOf(context);
  const { config } = context;
  const mode = (config.mode ?? 'upsert') as Mode;
  if (!STORE_STEP_MODES.includes(mode)) throw invalidConfig(context, 'mode', `config.mode must be one of ${STORE_STEP_MODES.join(', ')}`);
  if (typeof config.key !== 'string')
    throw invalidConfig(context, 'key', `config.key must yield a string; it gave ${describe(config.key)}`);
  return {
    output: null,
    effect: stores.write({
      workspaceId: context.execution.workspaceId,
      storeId: String(config.store_id),
      key: config.key,
      row: config.row,
      mode,
      workflowId: context.execution.workflowId,
      executionId: context.execution.id,
      now: context.clock.now(),
    }),
  };
};

export function storesOf(context: StepRunContext): StepStoreAccess {
  if (!context.stores) throw new NonRetriableError('stores are not available in this process', { code: 'not_available' });
  return context.stores;
}

export function invalidConfig(context: StepRunContext, field: string, message: string): NonRetriableError {
  return new NonRetriableError(`node "${context.nodeId}": ${message}.`, {
    code: 'invalid_config',
    details: { node_id: context.nodeId, field: `config.${field}` },
  });
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
