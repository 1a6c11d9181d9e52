#!/usr/bin/env node
// What a Postman user gets from the OpenAPI document (issue 36): the document converted into a
// collection by openapi-to-postmanv2, run by newman against `switchyard serve` on a seeded data
// dir. Every GET of the collection must answer without a 400 for the SHAPE of its query (an
// unknown parameter, a filter member or operator the server does not know, a malformed page):
// such a 400 means the document told the converter something the server does not accept. A 400
// for a VALUE the converter made up (an id that is no UUID) is counted, not failed.
//
// The tools are installed on first use into scratch/postman-tools (never dependencies of the
// product). Results: bench/results/postman.md. Usage: npm run build && node scripts/postman-check.mjs
/* global fetch, Buffer */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnServe } from '../bench/lib/spawn-serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tools = path.join(root, 'scratch', 'postman-tools');
const VERSIONS = { 'openapi-to-postmanv2': '6.4.2', newman: '6.2.2' };

function installTools() {
  const marker = path.join(tools, 'node_modules', 'newman', 'package.json');
  if (fs.existsSync(marker)) return;
  fs.mkdirSync(tools, { recursive: true });
  fs.writeFileSync(path.join(tools, 'package.json'), JSON.stringify({ name: 'postman-tools', private: true }));
  const specs = Object.entries(VERSIONS).map(([name, version]) => `${name}@${version}`);
  console.log(`installing ${specs.join(' ')} into ${path.relative(root, tools)}`);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...specs], { cwd: tools, stdio: 'inherit' });
}

/** The messages of a 400 about the query's shape, not about a value in it (api/jsonapi parsers). */
const SHAPE =
  /unknown query parameter|is not a filterable attribute|Unknown filter operator|takes a value or an operator|must be a filter object|takes a list of filters|takes one filter object|Unknown page parameter|Unknown resource type|is not an attribute of|applies to string attributes only/;

/** A JSON:API call with the token; throws on anything but 2xx. */
function apiCalls(baseUrl, token) {
  const call = async (method, url, body) => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.api+json' };
    const response = await fetch(`${baseUrl}${url}`, { method, headers, body: JSON.stringify(body) });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  return { post: (url, body) => call('POST', url, body), put: (url, body) => call('PUT', url, body) };
}

async function seed(api) {
  const workflow = (await api.post('/api/v1/workflows', { data: { name: 'Seeded' } })).data;
  await api.put(`/api/v1/workflows/${workflow.id}/graph`, {
    data: {
      graph: {
        nodes: [
          { id: 'hook', type: 'webhook', config: {} },
          { id: 'code', type: 'code', config: { code: 'return input;' } },
        ],
        edges: [{ source: 'hook', target: 'code' }],
      },
    },
  });
  await api.post(`/api/v1/workflows/${workflow.id}/run`, { data: { draft: true, input: { n: 1 } } });
  await api.post('/api/v1/folders', { data: { name: 'Seeded folder' } });
  const store = (
    await api.post('/api/v1/stores', {
      data: { name: 'Seeded store', slug: 'seeded', schema: { type: 'object', properties: { status: { type: 'string' } } } },
    })
  ).data;
  await api.put(`/api/v1/stores/${store.id}/rows/a`, { data: { row: { status: 'paid' } } });
  await api.post('/api/v1/memories', { data: { name: 'Seeded memory' } });
}

installTools();
const server = await spawnServe({ id: 'postman', env: { SWITCHYARD_API_RATE_LIMIT: '0' } });
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sy-postman-'));
try {
  const api = apiCalls(server.baseUrl, server.token);
  await seed(api);
  const documentFile = path.join(work, 'openapi.json');
  fs.writeFileSync(documentFile, await (await fetch(`${server.baseUrl}/api/docs/openapi.json`)).text());
  const collectionFile = path.join(work, 'collection.json');
  // Defaults but one: example values generated from the schemas (a UUID where a UUID goes),
  // rather than `<string>` placeholders that only say the type.
  execFileSync(
    path.join(tools, 'node_modules', '.bin', 'openapi2postmanv2'),
    ['-s', documentFile, '-o', collectionFile, '-O', 'parametersResolution=Example'],
    { stdio: 'inherit' },
  );
  const reportFile = path.join(work, 'report.json');
  const environment = {
    values: [
      { key: 'baseUrl', value: server.baseUrl },
      { key: 'bearerToken', value: server.token },
    ],
  };
  fs.writeFileSync(path.join(work, 'env.json'), JSON.stringify(environment));
  try {
    execFileSync(
      path.join(tools, 'node_modules', '.bin', 'newman'),
      [
        'run',
        collectionFile,
        '-e',
        path.join(work, 'env.json'),
        '--reporters',
        'json',
        '--reporter-json-export',
        reportFile,
        '--timeout-request',
        '10000',
      ],
      { stdio: 'inherit' },
    );
  } catch {
    // newman exits 1 when any request fails; the report says which.
  }
  const executions = JSON.parse(fs.readFileSync(reportFile, 'utf8')).run.executions;
  const gets = executions.filter((e) => e.request.method === 'GET' && e.request.url.path.join('/').startsWith('api/v1'));
  const shape = [];
  const value = [];
  const statuses = new Map();
  for (const execution of gets) {
    const status = execution.response?.code ?? 0;
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    if (status !== 400) continue;
    const body = Buffer.from(execution.response.stream.data).toString('utf8');
    const url = `/${execution.request.url.path.join('/')}?${(execution.request.url.query ?? [])
      .filter((q) => !q.disabled)
      .map((q) => `${q.key}=${q.value}`)
      .join('&')}`;
    let reason = body.slice(0, 300);
    try {
      const error = JSON.parse(body).errors[0];
      reason = `${error.source?.parameter ?? ''}: ${error.detail}`;
    } catch {
      // not an error document: keep the raw text
    }
    (SHAPE.test(body) ? shape : value).push({ url: url.length > 160 ? `${url.slice(0, 160)}…` : url, body: reason });
  }
  const lines = [
    '# Postman collection from the OpenAPI document',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} by \`scripts/postman-check.mjs\`: the document of \`switchyard serve\` (defaults, SQLite, API rate limit off, seeded with a workflow and its execution, a folder, a store with a row, a memory) converted by openapi-to-postmanv2 ${VERSIONS['openapi-to-postmanv2']} (\`parametersResolution=Example\`) and run by newman ${VERSIONS.newman} with the bootstrap token.`,
    '',
    '| | count |',
    '| --- | ---: |',
    `| GET requests under /api/v1 | ${gets.length} |`,
    ...[...statuses.entries()].sort(([a], [b]) => a - b).map(([status, count]) => `| answered ${status} | ${count} |`),
    `| **400 for the shape of the query** (the document and the server disagree) | **${shape.length}** |`,
    `| 400 for a value the converter made up | ${value.length} |`,
    '',
    ...(shape.length > 0 ? ['Shape refusals:', '', ...shape.map((s) => `- \`${s.url}\`: ${s.body}`), ''] : []),
    ...(value.length > 0 ? ['Value refusals (examples):', '', ...value.map((s) => `- \`${s.url}\`: ${s.body}`), ''] : []),
  ];
  fs.writeFileSync(path.join(root, 'bench', 'results', 'postman.md'), `${lines.join('\n')}\n`);
  console.log(lines.join('\n'));
  if (shape.length > 0) process.exitCode = 1;
} finally {
  await server.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
