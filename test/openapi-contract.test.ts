import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { OpenApiContract, type Exchange } from './support/openapi-contract.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * The contract test's checker, on the app's own document: it must refuse what the document does
 * not declare, or the check every API test runs through (test-app.ts) would prove nothing.
 */
describeEachDialect('OpenAPI contract checker', (dialect) => {
  let t: TestApp;
  let contract: OpenApiContract;
  let workflow: { status: number; raw: string };
  beforeAll(async () => {
    t = await createTestApp(dialect);
    contract = new OpenApiContract(structuredClone((await t.request('GET', '/api/docs/openapi.json', { token: null })).body));
    const created = await t.request('POST', '/api/v1/workflows', { body: { data: { name: 'Checked' } } });
    workflow = await t.request('GET', `/api/v1/workflows/${created.body.data.id}`);
  });
  afterAll(() => t.close());

  const exchange = (changes: Partial<Exchange>): Exchange => ({
    method: 'GET',
    route: '/api/v1/workflows/:id',
    url: '/api/v1/workflows/x',
    status: 200,
    contentType: 'application/vnd.api+json',
    body: workflow.raw,
    requestType: undefined,
    requestBody: undefined,
    ...changes,
  });

  it('passes an answer the document declares', () => {
    expect(workflow.status).toBe(200);
    expect(contract.check(exchange({}))).toEqual([]);
  });

  it('refuses an undeclared status, media type, operation or empty body where content is declared', () => {
    expect(contract.check(exchange({ status: 418 }))[0]).toMatch(/status 418 is not declared/);
    expect(contract.check(exchange({ contentType: 'text/html' }))[0]).toMatch(/declares application\/vnd\.api\+json, not text\/html/);
    expect(contract.check(exchange({ method: 'PUT' }))[0]).toMatch(/PUT \/api\/v1\/workflows\/\{id\} is not in the document/);
    expect(contract.check(exchange({ method: 'DELETE', status: 204, body: '{}' }))[0]).toMatch(/declares no content/);
  });

  it('refuses a member the document does not name, and a missing or mistyped one', () => {
    const document = JSON.parse(workflow.raw);
    const extra = structuredClone(document);
    extra.data.attributes.secret_sauce = 1;
    expect(contract.check(exchange({ body: JSON.stringify(extra) })).join('\n')).toMatch(
      /must NOT have additional properties.*secret_sauce/,
    );
    const top = { ...document, debug: true };
    expect(contract.check(exchange({ body: JSON.stringify(top) })).join('\n')).toMatch(/additional properties.*debug/);
    const mistyped = structuredClone(document);
    mistyped.data.attributes.name = 7;
    expect(contract.check(exchange({ body: JSON.stringify(mistyped) })).join('\n')).toMatch(/\/data\/attributes\/name must be string/);
    const error = { errors: [{ status: '404', code: 'not_found', title: 'Not found' }], jsonapi: { version: '1.0' } };
    expect(contract.check(exchange({ status: 404, body: JSON.stringify(error) })).join('\n')).toMatch(
      /must have required property 'detail'/,
    );
  });

  it('refuses a request body the app accepted but the document calls invalid', () => {
    const accepted = exchange({
      method: 'PATCH',
      requestType: 'application/vnd.api+json',
      requestBody: { data: { name: 'Renamed', colour: 'red' } },
    });
    expect(contract.check(accepted).join('\n')).toMatch(/accepted request body/);
    expect(contract.check({ ...accepted, requestBody: { data: { name: 'Renamed' } } })).toEqual([]);
  });
});
