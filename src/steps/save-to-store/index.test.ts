import { describe, expect, it } from 'vitest';
import { mergeStepConfig, validateStepConfig } from '../validate-step-config.js';
import { saveToStoreStep } from './index.js';

const check = (config: Record<string, unknown>) => validateStepConfig(saveToStoreStep, mergeStepConfig(saveToStoreStep, config));
const STORE_ID = '0190f5a2-7c1e-7a3b-9d2e-4f5a6b7c8d9e';

describe('save_to_store step', () => {
  it('accepts its default config once store, key and row are given', () => {
    expect(check({ store_id: STORE_ID, key: 'order-1', row: { total: 12 } })).toEqual([]);
  });

  it('requires store_id, key and row, which the default config leaves out', () => {
    expect(check({})).toEqual([
      { pointer: '/row', detail: 'config.row is required.' },
      { pointer: '/store_id', detail: 'config.store_id is required.' },
      { pointer: '/key', detail: 'config.key is required.' },
    ]);
  });

  it('takes the four modes, a delete needing no row', () => {
    for (const mode of ['upsert', 'insert', 'update']) expect(check({ store_id: STORE_ID, key: 'k', row: {}, mode })).toEqual([]);
    expect(check({ store_id: STORE_ID, key: 'k', mode: 'delete' })).toEqual([]);
    expect(check({ store_id: STORE_ID, key: 'k', mode: 'update' })).toEqual([{ pointer: '/row', detail: 'config.row is required.' }]);
    expect(check({ store_id: STORE_ID, key: 'k', row: {}, mode: 'merge' })).toEqual([
      { pointer: '/mode', detail: 'config.mode must be one of "upsert", "insert", "update", "delete".' },
    ]);
  });

  it('accepts an expression for the key and the row', () => {
    expect(check({ store_id: STORE_ID, key: '{{ trigger.body.order.id }}', row: '{{ trigger.body.order }}' })).toEqual([]);
  });

  it('rejects a row that is neither an object nor one expression', () => {
    expect(check({ store_id: STORE_ID, key: 'k', row: 'total: 12' })).toEqual([
      { pointer: '/row', detail: 'config.row must be an object or a single {{ … }} expression.' },
    ]);
    expect(check({ store_id: STORE_ID, key: 'k', row: [1, 2] })).toEqual([
      { pointer: '/row', detail: 'config.row must be an object or a single {{ … }} expression.' },
    ]);
  });

  it('rejects a store id that is not a UUID and an empty key', () => {
    expect(check({ store_id: 'orders', key: '', row: {} })).toEqual([
      { pointer: '/store_id', detail: 'config.store_id must be a UUID.' },
      { pointer: '/key', detail: 'config.key must not be empty.' },
    ]);
  });
});
