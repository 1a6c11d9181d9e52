import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiContext } from '../../api-context.js';
import { readActionData } from '../../jsonapi/request-document.js';
import { DOCUMENT_FORM, ERROR_RESPONSE_SCHEMA, ID_PARAMS_SCHEMA } from '../../jsonapi/resource-schemas.js';
import { dataBodyForm } from '../body-schemas.js';
import { actorOf } from '../workflows/workflow-routes.js';

const DRAFT = { type: 'boolean', description: 'run the live canvas instead of the source execution’s snapshot' } as const;
const REPLAY_MEMBERS = {
  input: { description: 'replaces the body of the source’s trigger payload (method, headers and query are kept); any JSON' },
  draft: DRAFT,
};
const RERUN_MEMBERS = {
  from_node_id: { type: 'string', minLength: 1, description: 'the node to run again, with everything after it' },
  draft: { ...DRAFT, description: 'the nodes from from_node_id on come from the live canvas (fix the failing node, re-run from it)' },
};

const STARTED = {
  description: 'plain JSON (application/json): the new execution was recorded and started (or queued)',
  type: 'object',
  required: ['execution_id'],
  properties: { execution_id: { type: 'string', format: 'uuid' } },
  additionalProperties: false,
} as const;

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

/**
 * `POST /executions/:id/replay` and `POST /executions/:id/rerun` (run control,
 * docs/run-control.md): a new execution made from an earlier one, linked to it by `replay_of`
 * or `rerun_of` and `rerun_from_node_id`. Members are checked by the service (422, pointers).
 */
export async function executionReplayRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const errors = { 422: ERROR_RESPONSE_SCHEMA };
  app.post(
    '/executions/:id/replay',
    {
      config: { plainJson: true },
      schema: {
        tags: ['Executions'],
        summary: 'Run the execution’s trigger payload again (or a new input in its body), as a new execution linked by replay_of',
        params: ID_PARAMS_SCHEMA,
        body: { [DOCUMENT_FORM]: dataBodyForm(REPLAY_MEMBERS, [], false) },
        response: { 201: STARTED, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      const answer = await ctx.executions.replay(actorOf(request), request.params.id, readActionData(request.body));
      return reply.code(201).type('application/json').send(answer);
    },
  );
  app.post(
    '/executions/:id/rerun',
    {
      config: { plainJson: true },
      schema: {
        tags: ['Executions'],
        summary: 'Run again from one node, reusing the records the execution finished of every node not downstream of it',
        params: ID_PARAMS_SCHEMA,
        body: { [DOCUMENT_FORM]: dataBodyForm(RERUN_MEMBERS, ['from_node_id']) },
        response: { 201: STARTED, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      const answer = await ctx.executions.rerun(actorOf(request), request.params.id, readActionData(request.body));
      return reply.code(201).type('application/json').send(answer);
    },
  );
}
