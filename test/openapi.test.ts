import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/** Every route of the foundation the document must describe. */
const ROUTES = [
  'post /api/v1/executions/{id}/retry',
  'post /api/v1/executions/{id}/cancel',
  'post /api/v1/workflows/{id}/run',
  'get /api/v1/me',
  'get /api/v1/workflows',
  'post /api/v1/workflows',
  'get /api/v1/workflows/{id}',
  'patch /api/v1/workflows/{id}',
  'delete /api/v1/workflows/{id}',
  'post /api/v1/workflows/{id}/activate',
  'post /api/v1/workflows/{id}/deactivate',
  'post /api/v1/workflows/{id}/duplicate',
  'patch /api/v1/workflows/{id}/move',
  'put /api/v1/workflows/{id}/graph',
  'get /api/v1/folders',
  'post /api/v1/folders',
  'get /api/v1/folders/{id}',
  'patch /api/v1/folders/{id}',
  'delete /api/v1/folders/{id}',
  'patch /api/v1/folders/{id}/reorder',
  'get /api/v1/step-templates',
  'get /api/v1/executions',
  'get /api/v1/executions/{id}',
  'get /api/v1/workflows/{workflow_id}/executions',
  'get /api/v1/executions/{workflow_execution_id}/steps',
  'get /api/v1/open_api',
  'get /api/v1/stores',
  'post /api/v1/stores',
  'get /api/v1/stores/{id}',
  'patch /api/v1/stores/{id}',
  'delete /api/v1/stores/{id}',
  'get /api/v1/stores/{id}/deletions',
  'get /api/v1/stores/{id}/dump',
  'post /api/v1/stores/restore',
  'get /api/v1/stores/{store_id}/rows',
  'put /api/v1/stores/{store_id}/rows/{key}',
  'get /api/v1/stores/{store_id}/rows/{key}',
  'delete /api/v1/stores/{store_id}/rows/{key}',
  'get /api/v1/connections',
  'post /api/v1/connections',
  'get /api/v1/connections/{id}',
  'patch /api/v1/connections/{id}',
  'delete /api/v1/connections/{id}',
  'get /api/v1/knowledge-bases',
  'post /api/v1/knowledge-bases',
  'get /api/v1/knowledge-bases/{id}',
  'patch /api/v1/knowledge-bases/{id}',
  'delete /api/v1/knowledge-bases/{id}',
  'get /api/v1/knowledge-bases/{id}/documents',
  'post /api/v1/knowledge-bases/{id}/documents',
  'get /api/v1/knowledge-bases/{id}/documents/{document_id}',
  'delete /api/v1/knowledge-bases/{id}/documents/{document_id}',
  'post /api/v1/knowledge-bases/{id}/search',
  'get /api/v1/memories',
  'post /api/v1/memories',
  'get /api/v1/memories/{id}',
  'patch /api/v1/memories/{id}',
  'delete /api/v1/memories/{id}',
  'get /api/v1/memories/{id}/sessions',
  'get /api/v1/memories/{id}/sessions/{key}/messages',
  'post /api/v1/memories/{id}/sessions/{key}/messages',
  'delete /api/v1/memories/{id}/sessions/{key}/messages',
  'get /api/v1/memories/{id}/sessions/{key}/context',
  'get /api/v1/workflows/{id}/export',
  'get /api/v1/workflows/{id}/calls',
  'get /api/v1/workflows/map',
  'get /api/v1/folders/{id}/export',
  'post /api/v1/folders/import',
  'get /api/v1/app-installations',
  'get /api/v1/app-installations/{id}',
  'delete /api/v1/app-installations/{id}',
  'post /webhooks/inbound/slack',
  'get /webhooks/inbound/slack/oauth',
  'post /api/v1/app-installations/slack/authorize',
  'post /webhooks/inbound/twilio',
  'post /webhooks/inbound/mailgun',
  'post /webhooks/inbound/mailgun/mime',
  'post /webhooks/inbound/postmark',
  'get /healthz',
  'get /readyz',
  'get /metrics',
];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- documents are walked by key
type Json = any;

describeEachDialect('OpenAPI document', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  it('is public at /api/docs/openapi.json and validates as OpenAPI 3', async () => {
    const res = await t.request('GET', '/api/docs/openapi.json', { token: null });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    await expect(SwaggerParser.validate(structuredClone(res.body))).resolves.toBeDefined();
  });

  it('describes every route with its schemas', async () => {
    const doc = (await t.request('GET', '/api/docs/openapi.json', { token: null })).body;
    const described = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method} ${path}`),
    );
    for (const route of ROUTES) expect(described).toContain(route);
    const list = doc.paths['/api/v1/workflows'].get;
    expect(
      list.responses['200'].content['application/vnd.api+json'].schema.properties.data.items.properties.attributes.properties,
    ).toHaveProperty('graph');
    expect(doc.paths['/api/v1/workflows'].post.requestBody.content).toHaveProperty(['application/vnd.api+json']);
    expect(doc.paths['/api/v1/workflows/{id}/graph'].put.responses['200'].content).toHaveProperty(['application/json']);
    expect(doc.paths['/api/v1/workflows/{id}/graph'].put.responses['422'].content).toHaveProperty(['application/vnd.api+json']);
    const steps = doc.paths['/api/v1/executions/{workflow_execution_id}/steps'].get;
    expect(steps.tags).toEqual(['Executions']);
    expect(
      steps.responses['200'].content['application/vnd.api+json'].schema.properties.data.items.properties.attributes.properties,
    ).toHaveProperty('logs');
    expect(doc.paths['/api/v1/executions/{id}'].get.responses['404'].content).toHaveProperty(['application/vnd.api+json']);
    // The webhook routes: rotation and capture (API), and the inbound endpoint (no API token).
    expect(doc.paths['/api/v1/workflows/{id}/webhooks/{node_id}/rotate'].post.responses['200'].content).toHaveProperty([
      'application/json',
    ]);
    expect(Object.keys(doc.paths['/api/v1/workflows/{id}/webhooks/{node_id}/capture'])).toEqual(expect.arrayContaining(['get', 'post']));
    const inbound = doc.paths['/webhooks/{webhook_id}'].post;
    expect(inbound.security).toEqual([]);
    expect(Object.keys(inbound.responses)).toEqual(expect.arrayContaining(['202', '401', '404', '504']));
    const slack = doc.paths['/webhooks/inbound/slack'].post;
    expect(slack.security).toEqual([]);
    expect(Object.keys(slack.responses)).toEqual(expect.arrayContaining(['200', '401', '413', '429']));
    // Stores: the row write is an action route (plain JSON), the row list a JSON:API list.
    const put = doc.paths['/api/v1/stores/{store_id}/rows/{key}'].put;
    expect(Object.keys(put.responses)).toEqual(expect.arrayContaining(['200', '201', '404', '409', '422']));
    expect(put.responses['201'].content).toHaveProperty(['application/json']);
    expect(put.tags).toEqual(['Stores']);
    expect(
      doc.paths['/api/v1/stores/{store_id}/rows'].get.responses['200'].content['application/vnd.api+json'].schema.properties.data.items
        .properties.attributes.properties,
    ).toHaveProperty('row');
    expect(doc.paths['/api/v1/stores/{store_id}/rows'].put).toBeUndefined();
    expect(doc.paths['/api/v1/stores/{id}/deletions'].get.responses['200'].content).toHaveProperty(['application/json']);
    // Knowledge: ingest takes JSON:API or a raw text body; search and message writes answer plain JSON.
    expect(Object.keys(doc.paths['/api/v1/knowledge-bases/{id}/documents'].post.requestBody.content).sort()).toEqual([
      'application/vnd.api+json',
      'text/markdown',
      'text/plain',
    ]);
    expect(
      doc.paths['/api/v1/knowledge-bases/{id}/search'].post.responses['200'].content['application/json'].schema.properties.results.items
        .properties,
    ).toHaveProperty('heading_path');
    expect(doc.paths['/api/v1/memories/{id}/sessions/{key}/messages'].post.responses['201'].content).toHaveProperty(['application/json']);
    expect(
      doc.paths['/api/v1/connections'].get.responses['200'].content['application/vnd.api+json'].schema.properties.data.items.properties
        .attributes.properties,
    ).not.toHaveProperty('api_key');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    // Workflow documents: both formats are named schemas, and the export routes answer them as plain JSON.
    expect(doc.components.schemas.ServiceDocument.properties.format).toMatchObject({ type: 'string', enum: ['service/v1'] });
    expect(doc.components.schemas.ServiceFolderDocument.properties.format).toMatchObject({ type: 'string', enum: ['service-folder/v1'] });
    expect(
      doc.paths['/api/v1/workflows/{id}/export'].get.responses['200'].content['application/json'].schema.properties.references,
    ).toBeDefined();
    expect(doc.paths['/api/v1/folders/{id}/export'].get.responses['200'].content['application/json'].schema.properties.calls).toBeDefined();
    expect(doc.paths['/api/v1/workflows/map'].get.responses['200'].content['application/json'].schema.properties.systems).toBeDefined();
    expect(
      doc.components.schemas.ServiceDocument.properties.references.properties.installations.items.properties.providers.items.enum,
    ).toEqual(['slack', 'twilio', 'mailgun', 'postmark']);
  });

  it('describes what POST /workflows imports: the ServiceDocument component, an n8n workflow or a bare graph, in either body form, and the import report', async () => {
    const doc = (await t.request('GET', '/api/docs/openapi.json', { token: null })).body;
    const create = doc.paths['/api/v1/workflows'].post;
    const data = create.requestBody.content['application/vnd.api+json'].schema.properties.data;
    // The fuzz reads `data.properties` as the members a body takes: the two forms are alternatives instead.
    expect(data.properties).toBeUndefined();
    const [flat, resource] = data.anyOf;
    expect([flat.title, resource.title]).toEqual(['Flat', 'Resource object']);
    for (const document of [flat.properties.document, resource.properties.attributes.properties.document]) {
      expect(document.anyOf[0]).toEqual({ $ref: '#/components/schemas/ServiceDocument' });
      expect(document.anyOf.slice(1).map((s: { title: string }) => s.title)).toEqual(['N8nWorkflow', 'Graph']);
      expect(document.description).toContain('bare `{nodes, edges}` graph');
    }
    expect(JSON.stringify(create.requestBody)).not.toContain('definitions');
    const meta = create.responses['201'].content['application/vnd.api+json'].schema.properties.meta;
    expect(Object.keys(meta.properties)).toEqual(['source', 'placeholders', 'requirements', 'webhook_tokens', 'source_nodes']);
    expect(Object.keys(meta.properties.requirements.properties)).toEqual([
      'credentials',
      'secrets',
      'bindings',
      'expressions',
      'provider_keys',
    ]);
    expect(meta.properties.placeholders.items.properties.original.properties).toHaveProperty('version');
    const folderImport = doc.paths['/api/v1/folders/import'].post;
    expect(folderImport.requestBody.content['application/vnd.api+json'].schema.properties.data.required).toEqual(['document']);
    expect(
      folderImport.responses['201'].content['application/vnd.api+json'].schema.properties.meta.properties.workflows.items.properties
        .requirements,
    ).toEqual(meta.properties.requirements);
  });

  it('names and tags every operation once, with a stable operationId', async () => {
    const doc = (await t.request('GET', '/api/docs/openapi.json', { token: null })).body;
    const operations = Object.entries(doc.paths as Record<string, Record<string, { operationId?: string; tags?: string[] }>>).flatMap(
      ([path, item]) => Object.entries(item).map(([method, op]) => ({ key: `${method} ${path}`, ...op })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(89);
    for (const op of operations) {
      expect(op.operationId, op.key).toMatch(/^[a-z][A-Za-z0-9]+$/);
      expect(op.tags?.length, op.key).toBeGreaterThan(0);
    }
    expect(new Set(operations.map((op) => op.operationId)).size).toBe(operations.length);
    expect(doc.paths['/api/v1/workflows'].get.operationId).toBe('listWorkflows');
    expect(doc.paths['/api/v1/workflows/{id}'].get.operationId).toBe('getWorkflow');
    expect(doc.paths['/api/v1/workflows/{id}/graph'].put.operationId).toBe('putWorkflowGraph');
  });

  it('declares filter, page and fields as deepObject parameters with their members', async () => {
    const doc = (await t.request('GET', '/api/docs/openapi.json', { token: null })).body;
    let objects = 0;
    for (const item of Object.values(doc.paths as Record<string, Record<string, { parameters?: Record<string, Json>[] }>>)) {
      for (const op of Object.values(item)) {
        for (const parameter of op.parameters ?? []) {
          if (parameter.in !== 'query' || parameter.schema?.type !== 'object') continue;
          objects++;
          expect(parameter, parameter.name).toMatchObject({ style: 'deepObject', explode: true });
          expect(parameter.schema.additionalProperties, parameter.name).not.toBe(true);
        }
      }
    }
    expect(objects).toBeGreaterThan(70);
    const parameters = Object.fromEntries(
      (doc.paths['/api/v1/workflows'].get.parameters as { name: string; schema: Json }[]).map((p) => [p.name, p.schema]),
    );
    const status = parameters.filter.properties.status;
    expect(status.anyOf[0]).toEqual({ type: 'string', enum: ['inactive', 'active'] });
    expect(Object.keys(status.anyOf[1].properties)).toEqual(expect.arrayContaining(['eq', 'in', 'is_nil', 'greater_than']));
    expect(parameters.filter.properties.name.anyOf[1].properties).toHaveProperty('ilike');
    expect(parameters.filter.properties).toHaveProperty('or');
    expect(parameters.filter.patternProperties).toHaveProperty(['^not$']);
    expect(parameters.page.properties.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 500 });
    expect(Object.keys(parameters.fields.properties)).toEqual(['workflow']);
    const rows = doc.paths['/api/v1/stores/{store_id}/rows'].get.parameters.find((p: { name: string }) => p.name === 'filter');
    expect(Object.keys(rows.schema.patternProperties)).toEqual(['^not$', '^row\\.[^.]+$']);
  });

  it('declares every status with its media type, errors as the JSON:API error document, and closes every object', async () => {
    const doc = (await t.request('GET', '/api/docs/openapi.json', { token: null })).body;
    const openApi = doc.paths['/api/v1/open_api'].get.responses;
    expect(Object.keys(openApi['200'].content)).toEqual(['application/json']);
    expect(openApi['401'].content['application/vnd.api+json'].schema).toEqual({ $ref: '#/components/schemas/ErrorDocument' });
    for (const path of ['/api/v1/workflows/{id}', '/api/v1/workflows/{id}/move']) {
      expect(Object.keys(doc.paths[path].patch.responses)).toEqual(
        expect.arrayContaining(['401', '404', '406', '409', '415', '422', '429']),
      );
    }
    const open: string[] = [];
    const visit = (schema: unknown, at: string): void => {
      if (Array.isArray(schema)) return schema.forEach((s, i) => visit(s, `${at}/${i}`));
      if (typeof schema !== 'object' || schema === null) return;
      const s = schema as Record<string, unknown>;
      if (s.properties && s.additionalProperties === undefined && !s.patternProperties) open.push(at);
      for (const [key, value] of Object.entries(s)) visit(value, `${at}/${key}`);
    };
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
          expect(response.description, `${method} ${path} ${status}`).toBeTruthy();
          if (path.startsWith('/api/v1/') && Number(status) >= 400) {
            expect(response.content['application/vnd.api+json'].schema, `${method} ${path} ${status}`).toEqual({
              $ref: '#/components/schemas/ErrorDocument',
            });
          }
          visit(response.content, `${method} ${path} ${status}`);
        }
        visit(op.requestBody, `${method} ${path} body`);
      }
    }
    expect(open).toEqual([]);
  });

  it('is the same document at /api/v1/open_api with a token, and 401 without one', async () => {
    const open = await t.request('GET', '/api/docs/openapi.json', { token: null });
    const authed = await t.request('GET', '/api/v1/open_api');
    expect(authed.status).toBe(200);
    expect(authed.body).toEqual(open.body);
    expect((await t.request('GET', '/api/v1/open_api', { token: null })).status).toBe(401);
  });
});
