import type { Expression, Kysely, RawBuilder } from 'kysely';
import type { Database } from '../schema.js';
import type { TableWrites } from '../table-writes.js';
import type { Notifier } from '../notifier.js';

export const DIALECT_NAMES = ['sqlite', 'postgres'] as const;
export type DialectName = (typeof DIALECT_NAMES)[number];

/**
 * Everything that differs between SQLite and PostgreSQL lives behind this interface, so the
 * repositories, the filter compiler and the migrations are written once.
 */
export interface SqlDialect {
  readonly name: DialectName;
  /**
   * Column type for text in migrations. PostgreSQL text columns use the "C" collation so strings
   * compare and sort by code point, as SQLite's default BINARY collation does, whatever locale
   * the database was created with.
   */
  readonly textType: 'text' | Expression<unknown>;
  /** Column type for booleans in migrations. */
  readonly booleanType: 'boolean' | 'integer';
  /** Column type for floating positions. */
  readonly doubleType: 'double precision' | 'real';
  /** Encodes a boolean for a parameter (SQLite binds no booleans). */
  bool(value: boolean): boolean | number;
  /** `a IS DISTINCT FROM b` (PostgreSQL) / `a IS NOT b` (SQLite). */
  distinctFrom(left: RawBuilder<unknown>, right: unknown, negate: boolean): RawBuilder<boolean>;
  /** Unicode-aware lower-casing, identical on both dialects, for `ilike`. */
  lower(expression: RawBuilder<unknown>): RawBuilder<string>;
  /**
   * The top-level member `name` of a JSON text column as an SQL value of `type`: NULL when the
   * member is absent or null, strings comparing by code point, numbers numerically, booleans as
   * the dialect's booleans. Store row filters compare it.
   */
  jsonMember(column: RawBuilder<unknown>, name: string, type: JsonScalarType): RawBuilder<unknown>;
  /**
   * Whether `SELECT … FOR UPDATE` locks rows (PostgreSQL). SQLite has one writer at a time and
   * this process one connection, so a transaction's reads are already serialised.
   */
  readonly rowLocks: boolean;
  /** The error a unique index raised (a taken slug, say). */
  isUniqueViolation(error: unknown): boolean;
}

export const JSON_SCALAR_TYPES = ['string', 'integer', 'number', 'boolean'] as const;
export type JsonScalarType = (typeof JSON_SCALAR_TYPES)[number];

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: SqlDialect;
  /**
   * A number that changes whenever another connection commits (SQLite's `data_version`, asked at
   * most once a millisecond: see throttled-probe.ts), or null where no such cheap probe exists
   * (PostgreSQL). In-process caches are only used where it exists: with it they notice writes
   * made by other processes (the CLI, say) within that millisecond.
   */
  externalChanges: (() => number) | null;
  /** Writes this process made, per table (see TableWrites). */
  writes: TableWrites;
  /**
   * Messages between processes sharing the database (PostgreSQL's LISTEN/NOTIFY); null on
   * SQLite, where one process owns the database.
   */
  notifier: Notifier | null;
  /** The SQLite database file; null in memory and on PostgreSQL. */
  file: string | null;
  close(): Promise<void>;
}
