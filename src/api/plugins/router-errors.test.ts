import type { FastifyError } from 'fastify';
import { describe, expect, it } from 'vitest';
import { rowKeyError } from './router-errors.js';

const error = (code: string) => ({ code, statusCode: 400, message: 'router', name: 'FastifyError' }) as FastifyError;
const STORE = '0190f2a0-0000-7000-8000-000000000001';

describe('router errors on row keys', () => {
  it('answers a key that is not UTF-8 as an invalid key', () => {
    const answer = rowKeyError(error('FST_ERR_BAD_URL'), `/api/v1/stores/${STORE}/rows/%FF?fields[store-row]=key`);
    expect(answer?.items).toEqual([
      { code: 'invalid_key', detail: 'the key in the path is not valid percent-encoded UTF-8', source: { parameter: 'key' } },
    ]);
  });

  it('answers an over-long key as an invalid key', () => {
    const answer = rowKeyError(error('FST_ERR_MAX_PARAM_LENGTH'), `/api/v1/stores/${STORE}/rows/${'a'.repeat(9000)}`);
    expect(answer?.items).toEqual([
      { code: 'invalid_key', detail: 'the key must be at most 512 characters', source: { parameter: 'key' } },
    ]);
  });

  it('leaves other paths and a bad store id to the generic answer', () => {
    expect(rowKeyError(error('FST_ERR_BAD_URL'), '/api/v1/workflows/%FF')).toBeNull();
    expect(rowKeyError(error('FST_ERR_BAD_URL'), '/api/v1/stores/%FF/rows/key')).toBeNull();
    expect(rowKeyError(error('FST_ERR_MAX_PARAM_LENGTH'), `/api/v1/stores/${'a'.repeat(9000)}/rows/key`)).toBeNull();
  });
});
