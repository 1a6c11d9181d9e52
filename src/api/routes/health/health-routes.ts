import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';

const STATUS = { type: 'object', properties: { status: { type: 'string' } } };

/** Liveness (the process answers) and readiness (the database answers); no token needed. */
export async function healthRoutes(app: FastifyInstance, db: Kysely<Database>): Promise<void> {
  app.get('/healthz', { schema: { tags: ['Health'], summary: 'The process is up', response: { 200: STATUS } } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { tags: ['Health'], summary: 'The database is reachable', response: { 200: STATUS, 503: STATUS } } }, async (request, reply) => {
    try {
      await sql`select 1`.execute(db);
      return { status: 'ready' };
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed');
      return reply.code(503).send({ status: 'database unreachable' });
    }
  });
}
