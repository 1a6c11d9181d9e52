/** A boolean column as read: `boolean` on PostgreSQL, 0/1 on SQLite (read with `Boolean(value)`; see schema.ts). */
export type Bool = boolean | number;
