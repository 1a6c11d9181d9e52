// Baseline: the smallest Fastify 5 app, logger off. Every other target is compared with it.
import Fastify from 'fastify';
import { announceReady } from '../lib/child-server.mjs';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ port: 0, host: '127.0.0.1' });
announceReady({ port: app.server.address().port }, () => app.close());
