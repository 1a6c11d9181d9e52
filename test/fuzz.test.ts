import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import type { FuzzRequest, FuzzResponse, Send } from './support/fuzz/fuzz-seed.js';
import { requestArbitrary, type FuzzContext } from './support/fuzz/fuzz-requests.js';
import { checkAnswer, describeRequest, type ForeignData } from './support/fuzz/fuzz-checks.js';
import { checkCrossPair, crossPairArbitrary } from './support/fuzz/fuzz-cross.js';
import { prepareFuzz } from './support/fuzz/fuzz-setup.js';

/**
 * Property-based requests generated from the OpenAPI document the app publishes, through
 * `app.inject()`: the short run of `npm test` (the long one, over real HTTP, is
 * `npm run bench:fuzz`). FUZZ_SEED replays a run; FUZZ_RUNS changes its length.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const options = { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }), endOnFailure: true };

describeEachDialect('fuzz from the OpenAPI document', (dialect) => {
  let t: TestApp;
  let send: Send;
  let ctx: FuzzContext;
  let foreign: ForeignData;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    send = async (request: FuzzRequest): Promise<FuzzResponse> => {
      const response = await t.app.inject({
        method: request.method as 'GET',
        url: request.url,
        headers: request.headers,
        ...(request.body !== undefined ? { payload: request.body } : {}),
      });
      return { status: response.statusCode, headers: response.headers, body: response.body };
    };
    ({ ctx, foreign } = await prepareFuzz(send, { build: t.tokens.build, read: t.tokens.read, free: t.tokens.free }, t.tokens.other));
  }, 60_000);
  afterAll(() => t.close());

  it('reads every operation of the document', () => {
    const listed = ctx.operations.map((op) => `${op.method} ${op.path}`);
    expect(listed).toEqual(
      expect.arrayContaining([
        'GET /api/v1/workflows',
        'PUT /api/v1/workflows/{id}/graph',
        'POST /api/v1/executions/{id}/cancel',
        'POST /webhooks/{webhook_id}',
      ]),
    );
    expect(ctx.operations.length).toBeGreaterThanOrEqual(30);
  });

  // Every operation with each path parameter replaced by something that is no id: a NUL byte
  // (PostgreSQL refuses it in a text parameter: a store row route answered 500 for %00 until a
  // random run found it), a NUL inside a word, a word, an over-long value.
  it('answers every operation with no 5xx when a path parameter is a NUL byte or not an id', async () => {
    const values = ['%00', 'a%00b', 'not-an-id', 'x'.repeat(300)];
    let sent = 0;
    // One parameter at a time; the others name nothing that exists (a well-formed id is a valid key too).
    const other = '0190f2a0-0000-7000-8000-000000000000';
    for (const op of ctx.operations) {
      for (const [bad, value] of op.pathParams.flatMap((param) => values.map((v) => [param, v] as const))) {
        let url = op.path;
        for (const param of op.pathParams) url = url.replace(`{${param}}`, param === bad ? value : other);
        const body = op.bodyType === null ? undefined : op.bodyType.includes('json') ? '{"data":{}}' : 'text';
        const request = {
          method: op.method.toUpperCase(),
          url,
          headers: {
            authorization: `Bearer ${ctx.tokens.build}`,
            accept: '*/*',
            ...(body === undefined ? {} : { 'content-type': op.bodyType! }),
          },
          ...(body === undefined ? {} : { body }),
        };
        const findings = checkAnswer(request, await send(request), foreign);
        expect(findings, describeRequest(request)).toEqual([]);
        sent += 1;
      }
    }
    expect(sent).toBeGreaterThan(100);
  }, 120_000);

  it('answers no request with a 5xx, every 4xx with a JSON:API error document, and nothing of the other workspace', async () => {
    await fc.assert(
      fc.asyncProperty(requestArbitrary(ctx), async (request) => {
        const findings = checkAnswer(request, await send(request), foreign);
        expect(findings, describeRequest(request)).toEqual([]);
      }),
      options,
    );
  }, 120_000);

  it("answers another workspace's ids exactly as unknown ids: 404 not_found in the path, the same answer in a body", async () => {
    await fc.assert(
      fc.asyncProperty(crossPairArbitrary(ctx), async (pair) => {
        const answer = await send(pair.request);
        const twin = await send(pair.twin);
        const findings = [...checkCrossPair(pair, answer, twin), ...checkAnswer(pair.request, answer, foreign)];
        expect(findings, describeRequest(pair.request)).toEqual([]);
      }),
      { ...options, numRuns: Math.ceil(RUNS / 2) },
    );
  }, 120_000);

  describe('afterwards', () => {
    it('still answers /healthz', async () => {
      const health = await send({ method: 'GET', url: '/healthz', headers: {} });
      expect(health.status).toBe(200);
      expect(JSON.parse(health.body)).toEqual({ status: 'ok' });
    });
  });
});
