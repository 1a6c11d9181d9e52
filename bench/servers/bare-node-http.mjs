// Baseline: node:http alone answering `{"hello":"world"}` as JSON, the ceiling of this machine,
// Node version and load generator. Serialised per request, as bare Fastify does.
import { Buffer } from 'node:buffer';
import http from 'node:http';
import { announceReady } from '../lib/child-server.mjs';

const server = http.createServer((request, response) => {
  const body = JSON.stringify({ hello: 'world' });
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  response.end(body);
});
server.listen(0, '127.0.0.1', () => {
  announceReady({ port: server.address().port }, () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
});
