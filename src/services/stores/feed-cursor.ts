import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalTimestamp } from '../../lib/clock.js';
import type { FeedPosition } from '../../store/store-row-repository.js';
import { AppError } from '../../errors/app-error.js';

export type FeedKind = 'rows' | 'deletions';

/** A 512-character key is at most 2 KiB of UTF-8; cursors we issue stay far below this. */
const MAX_CURSOR_LENGTH = 8192;
const TAG_BYTES = 16;

/**
 * Cursors of the store feeds: a position (time, key) bound to one feed of one store and signed
 * with HMAC-SHA256 under a key derived from the server's secret key. Signing (rather than the
 * shape checks of jsonapi/cursor.ts) makes a forged or altered cursor detectable, and since the
 * secret key is kept across restarts, so are the cursors: a consumer may store one for days.
 * The payload is not secret (a position the caller has already been shown).
 */
export class FeedCursors {
  private readonly key: Buffer;

  constructor(secretKey: string) {
    this.key = createHmac('sha256', secretKey).update('switchyard store feed cursor v1').digest();
  }

  encode(kind: FeedKind, storeId: string, position: FeedPosition): string {
    const payload = Buffer.from(JSON.stringify([1, kind, storeId, position.at, position.key])).toString('base64url');
    return `${payload}.${this.tag(payload).toString('base64url')}`;
  }

  /** The position a cursor names, checked to be ours and of this feed; 400 naming `parameter` otherwise. */
  decode(token: string, kind: FeedKind, storeId: string, parameter: string): FeedPosition {
    const invalid = () =>
      invalidParameter(parameter, `${parameter} is not a valid cursor; use the links.next of a previous page of this feed`);
    const [payload, tag, ...rest] = token.length > MAX_CURSOR_LENGTH ? [] : token.split('.');
    if (!payload || !tag || rest.length > 0 || !/^[A-Za-z0-9_-]+$/.test(payload)) throw invalid();
    const given = Buffer.from(tag, 'base64url');
    if (given.length !== TAG_BYTES || !timingSafeEqual(given, this.tag(payload))) throw invalid();
    let fields: unknown;
    try {
      fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalid();
    }
    if (!Array.isArray(fields) || fields.length !== 5 || fields[0] !== 1) throw invalid();
    const [, cursorKind, cursorStore, at, key] = fields as unknown[];
    if (typeof at !== 'string' || canonicalTimestamp(at) !== at || typeof key !== 'string') throw invalid();
    if (cursorKind !== kind)
      throw invalidParameter(parameter, `${parameter} is a cursor of the store's ${String(cursorKind)} feed, not of its ${kind} feed`);
    if (cursorStore !== storeId) throw invalidParameter(parameter, `${parameter} is a cursor of another store's feed`);
    return { at, key };
  }

  private tag(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, TAG_BYTES);
  }
}

/** The 400 of a cursor that is not one (the same as the query language's invalid parameter, api/jsonapi/filter-operand.ts). */
function invalidParameter(parameter: string, detail: string): AppError {
  return new AppError('invalid_query_parameter', detail, { parameter });
}
