import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';

const STATUS = {
  type: 'object',
  properties: {
    status: { type: 'string' },
    vector_search: { type: 'string', description: 'sqlite-vec, pgvector (HNSW) or exact (a scan: PostgreSQL without pgvector)' },
  },
};

/** Liveness (the process answers) and readiness (the database answers, and how vectors are searched); no token needed. */
export async function healthRoutes(
  app: FastifyInstance,
  db: Kysely<Database>,
  info: { vectorSearch: string | null } = { vectorSearch: null },
): Promise<void> {
  app.get('/healthz', { schema: { tags: ['Health'], summary: 'The process is up', response: { 200: STATUS } } }, async () => ({
    status: 'ok',
  }));
  app.get(
    '/readyz',
    { schema: { tags: ['Health'], summary: 'The database is reachable', response: { 200: STATUS, 503: STATUS } } },
    async (request, reply) => {
      try {
        await sql`select 1`.execute(db);
        return { status: 'ready', ...(info.vectorSearch ? { vector_search: info.vectorSearch } : {}) };
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        return reply.code(503).send({ status: 'database unreachable' });
      }
    },
  );
}
