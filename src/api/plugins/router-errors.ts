import type { FastifyError } from 'fastify';
import { AppError } from '../../errors/app-error.js';
import { MAX_KEY_LENGTH } from '../../store/store-keys.js';

/**
 * The router's own refusals (Fastify's `frameworkErrors`, framework-errors.ts) of a store row's
 * path: a key that does not percent-decode as UTF-8 (`FST_ERR_BAD_URL`) or one past
 * `maxParamLength`. They happen before routing, so no route handler sees them; they are
 * answered as the key's error (400 `invalid_key`, `source.parameter` `key`), like an empty or
 * over-long key that did reach the route.
 */
const ROW_KEY_PATH = /^\/api\/v1\/stores\/([^/?#]+)\/rows\/([^/?#]+)\/?(?:[?#]|$)/;

export function rowKeyError(error: FastifyError, url: string): AppError | null {
  const match = ROW_KEY_PATH.exec(url);
  if (!match) return null;
  const [, storeSegment, keySegment] = match as unknown as [string, string, string];
  if (error.code === 'FST_ERR_BAD_URL' && decodes(storeSegment) && !decodes(keySegment)) {
    return new AppError('invalid_key', 'the key in the path is not valid percent-encoded UTF-8', { parameter: 'key' });
  }
  // maxParamLength (8192) is far above the longest encoded key (512 characters of 12 bytes each).
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH' && keySegment.length > storeSegment.length) {
    return new AppError('invalid_key', `the key must be at most ${MAX_KEY_LENGTH} characters`, { parameter: 'key' });
  }
  return null;
}

function decodes(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}
