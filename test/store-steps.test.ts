import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { edge, executionRow, node, runToRest, stepRows, workflowWith } from './support/engine-helpers.js';
import { storeClient } from './support/store-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const ORDER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: { status: { enum: ['open', 'paid'] }, amount: { type: 'integer', minimum: 0 } },
};

/** webhook -> save (and optionally more nodes after it). */
function saveGraph(config: Record<string, unknown>, after: Record<string, unknown>[] = []) {
  const nodes = [node('hook', 'webhook'), node('save', 'save_to_store', config), ...after];
  const edges = [edge('hook', 'save'), ...after.map((n, i) => edge(i === 0 ? 'save' : String(after[i - 1]!.id), String(n.id)))];
  return { nodes, edges };
}

describeEachDialect('store steps', (dialect) => {
  let t: TestApp;
  let stores: ReturnType<typeof storeClient>;
  let orders: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    stores = storeClient(t);
    orders = (await stores.create({ name: 'Orders', schema: ORDER_SCHEMA, row_cap: 10 })).id;
  });
  afterAll(() => t.close());

  async function run(name: string, config: Record<string, unknown>, body: unknown = {}, after: Record<string, unknown>[] = []) {
    const workflowId = await workflowWith(t, name, saveGraph(config, after));
    const executionId = await runToRest(t, workflowId, { draft: true, input: body });
    return { workflowId, executionId, execution: await executionRow(t, executionId), steps: await stepRows(t, executionId) };
  }
  const rowOf = async (key: string) =>
    (await t.deps.db.selectFrom('store_rows').selectAll().where('store_id', '=', orders).where('key', '=', key).executeTakeFirst()) ?? null;
  const stepOf = (steps: Awaited<ReturnType<typeof stepRows>>, nodeId: string) => steps.filter((s) => s.node_id === nodeId);

  describe('save_to_store', () => {
    it('upserts by default, recording the workflow and the execution on the row, and outputs the row as stored', async () => {
      const first = await run(
        'upsert',
        { store_id: orders, key: '{{ trigger.body.id }}', row: { status: 'open', amount: '{{ trigger.body.amount }}' } },
        { id: 'o-1', amount: 5 },
      );
      expect(first.execution.status).toBe('completed');
      const [save] = stepOf(first.steps, 'save');
      expect(save).toMatchObject({ status: 'completed', attempt: 1 });
      expect(save!.output).toEqual({
        store_id: orders,
        key: 'o-1',
        row: { status: 'open', amount: 5 },
        mode: 'upsert',
        created: true,
        deleted: false,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      expect(await rowOf('o-1')).toMatchObject({
        row: JSON.stringify({ status: 'open', amount: 5 }),
        workflow_id: first.workflowId,
        execution_id: first.executionId,
      });

      t.clock.advance(5);
      const second = await run('upsert again', { store_id: orders, key: 'o-1', row: { status: 'paid' } });
      expect(stepOf(second.steps, 'save')[0]!.output).toMatchObject({ created: false, row: { status: 'paid' } });
      expect(await rowOf('o-1')).toMatchObject({
        row: '{"status":"paid"}',
        workflow_id: second.workflowId,
        execution_id: second.executionId,
      });
    });

    it('insert fails on an existing key and update on a missing one, without retries and without writing', async () => {
      await stores.putOk(orders, 'exists', { status: 'open' });
      const insert = await run('insert', { store_id: orders, key: 'exists', row: { status: 'paid' }, mode: 'insert' });
      expect(insert.execution.status).toBe('failed');
      const [failed] = stepOf(insert.steps, 'save');
      expect(failed).toMatchObject({ status: 'failed', attempt: 1 });
      expect(failed!.error).toMatchObject({
        code: 'row_exists',
        retryable: false,
        message: 'a row with key "exists" already exists in this store; PUT without mode "insert" replaces it',
      });
      expect(await rowOf('exists')).toMatchObject({ row: '{"status":"open"}', workflow_id: null });

      const update = await run('update', { store_id: orders, key: 'missing', row: { status: 'paid' }, mode: 'update' });
      expect(stepOf(update.steps, 'save')[0]!.error).toMatchObject({ code: 'row_not_found', retryable: false });
      expect(await rowOf('missing')).toBeNull();

      const updated = await run('update existing', { store_id: orders, key: 'exists', row: { status: 'paid' }, mode: 'update' });
      expect(stepOf(updated.steps, 'save')[0]).toMatchObject({ status: 'completed' });
      expect(await rowOf('exists')).toMatchObject({ row: '{"status":"paid"}', execution_id: updated.executionId });

      const inserted = await run('insert new', { store_id: orders, key: 'fresh', row: { status: 'open' }, mode: 'insert' });
      expect(stepOf(inserted.steps, 'save')[0]!.output).toMatchObject({ created: true, mode: 'insert' });
    });

    it('deletes a row, leaving a tombstone that names the workflow, and fails a delete of a missing key', async () => {
      await stores.putOk(orders, 'doomed', { status: 'open' });
      const removed = await run('delete', { store_id: orders, key: 'doomed', mode: 'delete' });
      expect(stepOf(removed.steps, 'save')[0]!.output).toMatchObject({ key: 'doomed', deleted: true, row: { status: 'open' } });
      expect(await rowOf('doomed')).toBeNull();
      const tombstone = await t.deps.db
        .selectFrom('store_deletions')
        .selectAll()
        .where('store_id', '=', orders)
        .where('key', '=', 'doomed')
        .executeTakeFirstOrThrow();
      expect(tombstone.workflow_id).toBe(removed.workflowId);
      const again = await run('delete again', { store_id: orders, key: 'doomed', mode: 'delete' });
      expect(stepOf(again.steps, 'save')[0]!.error).toMatchObject({ code: 'row_not_found', retryable: false });
    });

    it('fails the step on a schema violation with a pointer per violation into its config, and writes nothing', async () => {
      const bad = await run('bad row', { store_id: orders, key: 'bad', row: { status: 'lost', amount: -1, note: 'x' } });
      expect(bad.execution.status).toBe('failed');
      const [failed] = stepOf(bad.steps, 'save');
      expect(failed!.error).toMatchObject({ name: 'NonRetriableError', code: 'validation_failed', retryable: false });
      expect(failed!.error.details.errors).toEqual([
        { code: 'validation_failed', pointer: '/row/note', detail: "row.note is not allowed by the store's schema" },
        { code: 'validation_failed', pointer: '/row/status', detail: 'row.status must be one of "open", "paid"' },
        { code: 'validation_failed', pointer: '/row/amount', detail: 'row.amount must be >= 0' },
      ]);
      expect(failed!.error.message).toBe("3 problems; the first: row.note is not allowed by the store's schema");
      expect(await rowOf('bad')).toBeNull();
    });

    it('routes a failed write to the error port with on_error continue, and the steps after it see nothing written', async () => {
      const graph = {
        nodes: [
          node('hook', 'webhook'),
          node('save', 'save_to_store', { store_id: orders, key: 'x', row: { status: 'nope' } }, { on_error: 'continue' }),
          node('after', 'set', { values: { code: '{{ nodes.save.error.code }}' } }),
        ],
        edges: [edge('hook', 'save'), edge('save', 'after', 'error')],
      };
      const workflowId = await workflowWith(t, 'continue', graph);
      const executionId = await runToRest(t, workflowId);
      expect(await executionRow(t, executionId)).toMatchObject({
        status: 'completed',
        output: JSON.stringify({ code: 'validation_failed' }),
      });
      expect(await rowOf('x')).toBeNull();
    });

    it('refuses the row past the cap with row_cap_exceeded, and still replaces a row at the cap', async () => {
      const { row_count: count } = await t.deps.db
        .selectFrom('stores')
        .select('row_count')
        .where('id', '=', orders)
        .executeTakeFirstOrThrow();
      for (let i = Number(count); i < 10; i += 1) await stores.putOk(orders, `fill-${i}`, { status: 'open' });
      const over = await run('over cap', { store_id: orders, key: 'one-too-many', row: { status: 'open' } });
      expect(stepOf(over.steps, 'save')[0]!.error).toMatchObject({
        code: 'row_cap_exceeded',
        retryable: false,
        details: { errors: [{ code: 'row_cap_exceeded', meta: { row_count: 10, row_cap: 10 } }] },
      });
      expect(await rowOf('one-too-many')).toBeNull();
      const replace = await run('replace at cap', { store_id: orders, key: 'exists', row: { status: 'open' } });
      expect(stepOf(replace.steps, 'save')[0]).toMatchObject({ status: 'completed' });
    });

    it("treats another workspace's store exactly as an unknown one", async () => {
      const foreign = await t.request('POST', '/api/v1/stores', { token: t.tokens.other, body: { data: { name: 'Theirs' } } });
      expect(foreign.status).toBe(201);
      const theirs = await run('foreign', { store_id: foreign.body.data.id, key: 'k', row: {} });
      const unknown = await run('unknown', { store_id: '0190f5a2-7c1e-7a3b-9d2e-4f5a6b7c8d9e', key: 'k', row: {} });
      const errorOf = (r: typeof theirs, id: string) => JSON.stringify(stepOf(r.steps, 'save')[0]!.error).replace(id, 'ID');
      expect(errorOf(theirs, foreign.body.data.id)).toBe(errorOf(unknown, '0190f5a2-7c1e-7a3b-9d2e-4f5a6b7c8d9e'));
      expect(stepOf(theirs.steps, 'save')[0]!.error).toMatchObject({ code: 'store_not_found', retryable: false });
      expect(await t.deps.db.selectFrom('store_rows').select('key').where('store_id', '=', foreign.body.data.id).execute()).toEqual([]);
    });

    it('lets the next step read the row the save committed', async () => {
      // The store is at its cap by now: this replaces a row.
      const { steps } = await run('save then read', { store_id: orders, key: 'exists', row: { status: 'open', amount: 7 } }, {}, [
        node('read', 'read_store', { store_id: orders, key: 'exists' }),
      ]);
      expect(stepOf(steps, 'read')[0]!.output).toMatchObject({ key: 'exists', row: { status: 'open', amount: 7 } });
    });
  });

  describe('read_store', () => {
    let catalog: string;
    beforeAll(async () => {
      catalog = (
        await stores.create({
          name: 'Catalog',
          schema: { type: 'object', properties: { kind: { type: 'string' }, price: { type: 'integer' } } },
        })
      ).id;
      for (const [key, kind, price] of [
        ['a', 'tool', 5],
        ['b', 'toy', 15],
        ['c', 'tool', 25],
        ['d', 'tool', 35],
      ] as const) {
        t.clock.advance(1);
        await stores.putOk(catalog, key, { kind, price });
      }
    });
    async function read(config: Record<string, unknown>) {
      const workflowId = await workflowWith(t, 'read', {
        nodes: [node('hook', 'webhook'), node('read', 'read_store', Object.assign({ store_id: catalog }, config))],
        edges: [edge('hook', 'read')],
      });
      const executionId = await runToRest(t, workflowId, { draft: true, input: { kind: 'tool' } });
      return stepOf(await stepRows(t, executionId), 'read')[0]!;
    }

    it("gets one row by key as the row resource's attributes, and null for a missing key", async () => {
      const row = (await t.request('GET', `/api/v1/stores/${catalog}/rows/b`)).body.data.attributes;
      const step = await read({ key: 'b' });
      expect(step.output).toEqual({
        key: 'b',
        row: { kind: 'toy', price: 15 },
        created_at: expect.any(String),
        updated_at: expect.any(String),
        workflow_id: null,
        execution_id: null,
      });
      expect(step.output).toEqual(row);
      const missing = await read({ key: 'zz' });
      expect(missing.status).toBe('completed');
      expect(missing.output).toBeNull();
    });

    it('lists rows in change-feed order with a limit', async () => {
      const step = await read({ limit: 3 });
      expect(step.output.count).toBe(3);
      expect(step.output.rows[0]).toEqual({
        key: 'a',
        row: { kind: 'tool', price: 5 },
        created_at: expect.any(String),
        updated_at: expect.any(String),
        workflow_id: null,
        execution_id: null,
      });
      expect(step.output.rows.map((r: { key: string }) => r.key)).toEqual(['a', 'b', 'c']);
    });

    it('filters with the row list filter language, typed by the schema, values from expressions', async () => {
      const step = await read({ filter: { 'row.kind': { eq: '{{ trigger.body.kind }}' }, 'row.price': { greater_than: 10 } } });
      expect(step.error).toBeNull();
      expect(step.output.rows.map((r: { key: string }) => r.key)).toEqual(['c', 'd']);
      const or = await read({ filter: { or: [{ key: 'a' }, { 'row.price': { greater_than_or_equal: 35 } }] } });
      expect(or.output.rows.map((r: { key: string }) => r.key)).toEqual(['a', 'd']);
    });

    it('fails on a filter naming an undeclared field, with the API message', async () => {
      const step = await read({ filter: { 'row.colour': { eq: 'red' } } });
      expect(step).toMatchObject({ status: 'failed' });
      expect(step.error).toMatchObject({ code: 'invalid_query_parameter', retryable: false });
      expect(step.error.details.errors[0]).toMatchObject({ parameter: 'filter[row.colour]' });
    });

    it("reads another workspace's store as unknown", async () => {
      const foreign = await t.request('POST', '/api/v1/stores', { token: t.tokens.other, body: { data: { name: 'Hidden' } } });
      const step = await read({ store_id: foreign.body.data.id, key: 'a' });
      expect(step.error).toMatchObject({ code: 'store_not_found', message: `store ${foreign.body.data.id} not found` });
    });
  });
});
