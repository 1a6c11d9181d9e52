// The knowledge benchmarks' HTTP client: JSON:API calls on one keep-alive connection, knowledge
// bases made and documents ingested until every one is ready.
import { performance } from 'node:perf_hooks';
import { Client, Pool } from 'undici';

const MEDIA = 'application/vnd.api+json';

/**
 * `{call(method, url, body), close()}` on `server` (`{origin, token}`) with its build token, over
 * `connections` keep-alive connections (an undici `Client` is one connection, one request at a time).
 */
export function api(server, { connections = 1 } = {}) {
  const options = { pipelining: 1, keepAliveTimeout: 120_000 };
  const client = connections > 1 ? new Pool(server.origin, { ...options, connections }) : new Client(server.origin, options);
  const headers = { authorization: `Bearer ${server.token}`, accept: `${MEDIA}, application/json`, 'content-type': MEDIA };
  const call = async (method, url, body) => {
    const res = await client.request({ method, path: url, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${url} answered ${res.statusCode}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };
  return { call, close: () => client.close() };
}

export async function createBase(client, name, attributes = {}) {
  return (await client.call('POST', '/api/v1/knowledge-bases', { data: { type: 'knowledge-base', attributes: { name, ...attributes } } }))
    .data.id;
}

/** Posts documents `concurrency` at a time (give the client as many connections); resolves when every one is ready; returns timings. */
export async function ingestAll(client, baseId, documents, { concurrency = 4, log = () => {} } = {}) {
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < documents.length) {
      const doc = documents[next++];
      await client.call('POST', `/api/v1/knowledge-bases/${baseId}/documents`, {
        data: { type: 'knowledge-document', attributes: { title: doc.title, content: doc.content, content_type: 'text/markdown' } },
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const posted = performance.now();
  for (let polls = 0; ; polls++) {
    const pending = await client.call(
      'GET',
      `/api/v1/knowledge-bases/${baseId}/documents?filter[status][not_eq]=ready&page[limit]=1&page[count]=true&fields[knowledge-document]=status,error`,
    );
    if (pending.meta.count === 0) break;
    if (pending.data[0]?.attributes.status === 'failed')
      throw new Error(`a document failed: ${JSON.stringify(pending.data[0].attributes.error)}`);
    if (polls % 40 === 0) log(`  ${pending.meta.count} documents still pending`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const ready = performance.now();
  const base = (await client.call('GET', `/api/v1/knowledge-bases/${baseId}`)).data.attributes;
  return {
    seconds: (ready - started) / 1000,
    postSeconds: (posted - started) / 1000,
    chunks: base.chunk_count,
    documents: base.document_count,
  };
}
