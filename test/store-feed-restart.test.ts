import { expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { openPostgres } from '../src/db/dialect/postgres.js';
import { openSqlite } from '../src/db/dialect/sqlite.js';
import { buildDeps } from '../src/deps.js';
import { systemClock } from '../src/lib/clock.js';
import { describeEachDialect } from './support/dialects.js';
import { keysOf, relative, storeClient } from './support/store-helpers.js';
import { createTestApp } from './support/test-app.js';

describeEachDialect('store feed cursors across a restart', (dialect) => {
  it('follows a cursor issued before the app closed, in a new app on the same database', async () => {
    const t = await createTestApp(dialect, { sqliteFile: true });
    try {
      const stores = storeClient(t);
      const store = (await stores.create({ name: 'Durable' })).id;
      for (const key of ['one', 'two']) await stores.putOk(store, key, {});
      const { next } = await stores.drain(`/api/v1/stores/${store}/rows`);
      await t.app.close();
      await t.deps.engine.stop();

      // A new process: its own connection, caches and cursor codec; the same secret key.
      const database = dialect === 'sqlite' ? openSqlite(t.database.url!) : openPostgres(t.database.url!, { max: 2 });
      const deps = await buildDeps(
        { databaseUrl: null, dataDir: '/nonexistent', secretKey: 'test-secret-key-test-secret-key-0123456789', baseUrl: 'http://sy.test' },
        { clock: systemClock, database, timers: false },
      );
      const app = await buildApp({ ...deps, config: { apiRateLimit: 0, trustProxy: [], baseUrl: 'http://sy.test' }, logger: false });
      try {
        const headers = { authorization: `Bearer ${t.tokens.build}`, 'content-type': 'application/vnd.api+json' };
        const put = await app.inject({
          method: 'PUT',
          url: `/api/v1/stores/${store}/rows/three`,
          headers,
          payload: JSON.stringify({ data: { row: {} } }),
        });
        expect(put.statusCode).toBe(201);
        const res = await app.inject({ method: 'GET', url: next, headers });
        expect(res.statusCode).toBe(200);
        const body = JSON.parse(res.body);
        expect(keysOf(body.data)).toEqual(['three']);
        const after = await app.inject({ method: 'GET', url: relative(body.links.next), headers });
        expect(JSON.parse(after.body).data).toEqual([]);
      } finally {
        await app.close();
        await deps.close();
      }
    } finally {
      await t.deps.close();
    }
  });
});
