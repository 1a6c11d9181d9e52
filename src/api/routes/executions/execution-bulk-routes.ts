import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../../errors/app-error.js';
import { isPlainObject } from '../../../lib/json.js';
import { escapePointerToken } from '../../../lib/json-pointer.js';
import { BULK_STATUSES, MAX_BULK_EXECUTIONS, type BulkAction } from '../../../services/executions/execution-bulk.js';
import { ExecutionRepository } from '../../../store/execution-repository.js';
import type { ApiContext } from '../../api-context.js';
import { applyFilter } from '../../jsonapi/filter-sql.js';
import { parseFilter, type FilterNode } from '../../jsonapi/filter.js';
import { readActionData } from '../../jsonapi/request-document.js';
import { actionBodySchema, ERROR_RESPONSE_SCHEMA } from '../../jsonapi/resource-schemas.js';
import { actorOf } from '../workflows/workflow-routes.js';
import { executionResource } from './execution-resource.js';

const BULK_RESPONSE = {
  description: 'plain JSON (application/json): what this call did; call again while `remaining` is above 0',
  type: 'object',
  required: ['matched', 'acted', 'remaining'],
  properties: {
    matched: { type: 'integer', description: 'executions of the workspace matching the filter in a status the action applies to' },
    acted: { type: 'integer', description: `executions this call cancelled or retried (at most ${MAX_BULK_EXECUTIONS})` },
    remaining: { type: 'integer', description: 'matched - acted: what the next call may act on' },
  },
  additionalProperties: false,
} as const;

const FILTER_MEMBER = {
  type: 'object',
  description:
    'the filter of GET /executions as an object ({"status": {"eq": "failed"}, "workflow_id": {"eq": "…"}}, and/or/not); {} matches every execution',
};

/** `filter[a][b]` (how the filter parser names a member) as the body's pointer `/data/filter/a/b`. */
function pointerOf(parameter: string): string {
  const names = parameter.replace(/^filter/, '').match(/\[[^\]]*\]/g) ?? [];
  return `/data/filter${names.map((name) => `/${escapePointerToken(name.slice(1, -1))}`).join('')}`;
}

/** The body's filter, parsed with the list's parser; its errors point into the body. */
function readFilter(body: unknown): FilterNode {
  const data = readActionData(body);
  for (const key of Object.keys(data)) {
    if (key !== 'filter')
      throw new AppError('validation_failed', `unknown member "${key}": the action takes filter`, {
        pointer: `/data/${escapePointerToken(key)}`,
      });
  }
  if (!isPlainObject(data.filter))
    throw new AppError('validation_failed', 'filter must be an object: the filter of GET /executions, or {} for every execution', {
      pointer: '/data/filter',
    });
  try {
    return parseFilter(data.filter, executionResource);
  } catch (error) {
    const source = error instanceof AppError ? (error.items[0]?.source as { parameter?: string } | undefined) : undefined;
    const parameter = source?.parameter;
    if (error instanceof AppError && error.code === 'invalid_query_parameter' && typeof parameter === 'string') {
      throw new AppError('validation_failed', error.items[0]!.detail, { pointer: pointerOf(parameter) });
    }
    throw error;
  }
}

/**
 * `POST /executions/cancel` and `POST /executions/retry`: the action on every execution of the
 * workspace the filter matches, oldest first, at most MAX_BULK_EXECUTIONS a call.
 */
export async function executionBulkRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  for (const action of ['cancel', 'retry'] as const satisfies readonly BulkAction[]) {
    app.post(
      `/executions/${action}`,
      {
        config: { plainJson: true },
        schema: {
          tags: ['Executions'],
          summary:
            action === 'cancel'
              ? `Cancel every pending, running or waiting execution the filter matches (at most ${MAX_BULK_EXECUTIONS} a call)`
              : `Retry every failed or cancelled execution the filter matches, each as a new execution (at most ${MAX_BULK_EXECUTIONS} a call)`,
          body: actionBodySchema({ filter: FILTER_MEMBER }, ['filter']),
          response: {
            200: BULK_RESPONSE,
            400: ERROR_RESPONSE_SCHEMA,
            401: ERROR_RESPONSE_SCHEMA,
            403: ERROR_RESPONSE_SCHEMA,
            422: ERROR_RESPONSE_SCHEMA,
          },
        },
      },
      async (request: FastifyRequest, reply) => {
        const filter = readFilter(request.body);
        const workspaceId = request.auth.workspace.id;
        let base = new ExecutionRepository(ctx.db, workspaceId).selectBase().where('executions.status', 'in', [...BULK_STATUSES[action]]);
        // A retried execution stays failed: it is retried once, or a second call would again.
        if (action === 'retry')
          base = base.where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('executions as retried').select('retried.id').whereRef('retried.retry_of_execution_id', '=', 'executions.id'),
              ),
            ),
          );
        const matching = applyFilter(base, filter, executionResource, ctx.dialect, {
          scope: { column: 'workspace_id', value: workspaceId },
        });
        const counted = await matching.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
        const matched = Number(counted.n);
        const ids = (
          await matching
            .select('executions.id')
            .orderBy('executions.inserted_at')
            .orderBy('executions.id')
            .limit(MAX_BULK_EXECUTIONS)
            .execute()
        ).map((row) => row.id);
        const acted = await ctx.executions.actOnMany(actorOf(request), action, ids);
        // DESIGN.md: remaining = matched - acted (an execution that ended meanwhile is counted again by the next call).
        return reply.type('application/json').send({ matched, acted, remaining: Math.max(0, matched - acted) });
      },
    );
  }
}
