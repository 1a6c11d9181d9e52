import { findUnstorableInJson } from '../lib/storable-text.js';
import type { SchemaIssue } from './row-schema.js';

/** A row's JSON text is at most this long (the API's whole request body is 1 MiB too). */
export const MAX_ROW_BYTES = 1024 * 1024;

/**
 * What makes a row's text unstorable, beyond its schema: its size, and strings (values or
 * member names) holding NUL or an unpaired surrogate (lib/storable-text.ts). PostgreSQL's
 * jsonb, which row filters read, refuses both, so one such row would break every filtered read
 * of its store; SQLite would keep them, and both dialects must accept the same rows.
 */
export function checkRowText(row: unknown, text: string): SchemaIssue | null {
  if (Buffer.byteLength(text) > MAX_ROW_BYTES) return { pointer: '', detail: `row must be at most ${MAX_ROW_BYTES / 1024} KiB of JSON` };
  return findUnstorableInJson(text, row);
}
