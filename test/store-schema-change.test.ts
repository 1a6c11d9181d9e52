import { afterAll, beforeAll, expect, it } from 'vitest';
import { compileRowSchema } from '../src/store/row-schema.js';
import { StoreRepository } from '../src/store/store-repository.js';
import { remainingViolations, scanRows } from '../src/services/stores/schema-change.js';
import { describeEachDialect } from './support/dialects.js';
import { storeClient } from './support/store-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

describeEachDialect('schema change against rows written during the scan', (dialect) => {
  let t: TestApp;
  let stores: ReturnType<typeof storeClient>;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    stores = storeClient(t);
  });
  afterAll(() => t.close());

  const validate = compileRowSchema({ type: 'object', properties: { n: { type: 'integer' } } });
  const load = (id: string) => new StoreRepository(t.deps.db, t.workspaces.main).find(id).then((row) => row!);
  const finalCheck = (id: string, scan: Awaited<ReturnType<typeof scanRows>>) =>
    t.deps.db
      .transaction()
      .execute(async (trx) =>
        remainingViolations(trx, (await new StoreRepository(trx, t.workspaces.main).lock(t.deps.dialect, id))!, validate, scan),
      );

  it('re-checks rows written after the scan began: fixed violators drop out, new ones count, deleted ones go', async () => {
    const store = (await stores.create({ name: 'Scanned' })).id;
    for (const key of ['fixed', 'kept', 'deleted']) await stores.putOk(store, key, { n: 'bad' });
    await stores.putOk(store, 'spoiled', { n: 1 });
    const scan = await scanRows(t.deps.db, await load(store), validate);
    expect(scan.violators).toEqual(['deleted', 'fixed', 'kept']);

    // Writes that land after the scan read its rows, before the final transaction.
    await stores.putOk(store, 'fixed', { n: 2 });
    await stores.remove(store, 'deleted');
    await stores.putOk(store, 'spoiled', { n: 'bad' });
    await stores.putOk(store, 'added', { n: 'bad' });

    const left = await finalCheck(store, scan);
    expect(left).toEqual({ count: 3, firstKeys: ['added', 'kept', 'spoiled'], example: { key: 'added', detail: 'row.n must be integer' } });
  });

  it('accepts once every violator was fixed or deleted during the scan', async () => {
    const store = (await stores.create({ name: 'Repaired' })).id;
    await stores.putOk(store, 'a', { n: 'bad' });
    await stores.putOk(store, 'b', { n: 'bad' });
    const scan = await scanRows(t.deps.db, await load(store), validate);
    expect(scan.violators).toEqual(['a', 'b']);
    await stores.putOk(store, 'a', { n: 1 });
    await stores.remove(store, 'b');
    expect(await finalCheck(store, scan)).toEqual({ count: 0, firstKeys: [], example: null });
    const res = await stores.patch(store, { schema: { type: 'object', properties: { n: { type: 'integer' } } } });
    expect(res.status).toBe(200);
  });

  it('scans a store larger than one batch', async () => {
    const store = (await stores.create({ name: 'Large' })).id;
    await t.deps.db.transaction().execute(async (trx) => {
      const rows = Array.from({ length: 2300 }, (_, i) => ({
        store_id: store,
        key: `r${String(i).padStart(4, '0')}`,
        row: JSON.stringify({ n: i % 1000 === 999 ? 'bad' : i }),
        created_at: '2026-11-01T00:00:00.000000Z',
        updated_at: '2026-11-01T00:00:00.000000Z',
        workflow_id: null,
        execution_id: null,
      }));
      for (let i = 0; i < rows.length; i += 500)
        await trx
          .insertInto('store_rows')
          .values(rows.slice(i, i + 500))
          .execute();
      await trx
        .updateTable('stores')
        .set({ row_count: 2300, last_write_at: '2026-11-01T00:00:00.000000Z' })
        .where('id', '=', store)
        .execute();
    });
    const res = await stores.patch(store, { schema: { type: 'object', properties: { n: { type: 'integer' } } } });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].meta).toEqual({ violating_rows: 2, first_keys: ['r0999', 'r1999'] });
  });
});
