import type { DialectName } from '../db/dialect/dialect.js';
import type { StoredVector } from '../db/schema.js';

/** A vector as a column value: float32 little-endian bytes on SQLite (what sqlite-vec reads), `real[]` on PostgreSQL. */
export function toStoredVector(dialect: DialectName, vector: Float32Array): StoredVector {
  return dialect === 'postgres' ? Array.from(vector) : Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** Raw float32 bytes on both dialects (memory messages use `bytea` on PostgreSQL). */
export function toVectorBytes(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function fromStoredVector(value: StoredVector | null | undefined): Float32Array | null {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return Float32Array.from(value, Number);
  const bytes = value as Uint8Array;
  // Copied: a Buffer from the driver may sit unaligned inside a larger pool.
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}
