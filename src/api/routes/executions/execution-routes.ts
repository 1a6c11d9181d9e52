import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../../../errors/app-error.js';
import { isUuid } from '../../../lib/ids.js';
import { ExecutionRepository, type ExecutionRow } from '../../../store/execution-repository.js';
import { WorkflowRepository } from '../../../store/workflow-repository.js';
import { type ApiContext, apiUrl } from '../../api-context.js';
import { parseFields, selectedAttributes, type FieldsMap } from '../../jsonapi/fields.js';
import { parseInclude } from '../../jsonapi/include.js';
import { columnOf, type ResourceDefinition } from '../../jsonapi/resource-definition.js';
import { sendList, sendResource } from '../../jsonapi/respond.js';
import { readActionData } from '../../jsonapi/request-document.js';
import { RUN_RESPONSE_SCHEMA } from '../workflows/graph-schemas.js';
import { toResourceObject, type ResourceObject } from '../../jsonapi/serialize.js';
import {
  actionBodySchema,
  ERROR_RESPONSE_SCHEMA,
  ID_PARAMS_SCHEMA,
  LIST_QUERY_SCHEMA,
  listDocumentSchema,
  SINGLE_QUERY_SCHEMA,
  singleDocumentSchema,
} from '../../jsonapi/resource-schemas.js';
import { actorOf } from '../workflows/workflow-routes.js';
import { workflowResource } from '../workflows/workflow-resource.js';
import { EXECUTION_RELATIONSHIPS, executionResource } from './execution-resource.js';
import { EXECUTION_STEP_RELATIONSHIPS, executionStepObject, executionStepResource } from './execution-step-resource.js';

type Row = Record<string, unknown>;
type Query = { fields?: unknown; include?: unknown };

const paramsOf = (name: string) =>
  ({ type: 'object', required: [name], properties: { [name]: { type: 'string', description: 'UUID' } } }) as const;
const WORKFLOW_PARAMS = paramsOf('workflow_id');
const STEPS_PARAMS = paramsOf('workflow_execution_id');

const errors = { 400: ERROR_RESPONSE_SCHEMA, 401: ERROR_RESPONSE_SCHEMA, 403: ERROR_RESPONSE_SCHEMA, 404: ERROR_RESPONSE_SCHEMA };
const tags = ['Executions'];
const executionList = listDocumentSchema(executionResource, EXECUTION_RELATIONSHIPS, [workflowResource]);

/** A malformed id cannot name an execution, so it answers like an unknown one. */
async function findExecution(repo: ExecutionRepository, id: string): Promise<ExecutionRow> {
  const row = isUuid(id) ? await repo.find(id) : undefined;
  if (!row) throw notFound('execution');
  return row;
}

/** Parses `fields` once per request: lists render many rows with the same fieldsets. */
function fieldsOnce(request: FastifyRequest, definitions: ResourceDefinition[]): () => FieldsMap {
  let fields: FieldsMap | undefined;
  return () => (fields ??= parseFields((request.query as Query).fields, definitions));
}

export async function executionRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const repoOf = (request: FastifyRequest) => new ExecutionRepository(ctx.db, request.auth.workspace.id);

  const executionObject = (row: Row, fields: FieldsMap): ResourceObject =>
    toResourceObject(executionResource, row, selectedAttributes(executionResource, fields), apiUrl(ctx, `/executions/${String(row.id)}`), {
      workflow: { data: { type: 'workflow', id: String(row.workflow_id) } },
    });

  const stepObject = (row: Row, fields: FieldsMap): ResourceObject =>
    executionStepObject(ctx, row, selectedAttributes(executionStepResource, fields));

  /** `include=workflow`: the workflows of the given executions, each once, in first-seen order. */
  const includedWorkflows = async (request: FastifyRequest, rows: Row[], fields: FieldsMap): Promise<ResourceObject[] | undefined> => {
    if (!parseInclude((request.query as Query).include, executionResource, ['workflow']).includes('workflow')) return undefined;
    const ids = [...new Set(rows.map((row) => String(row.workflow_id)))];
    if (ids.length === 0) return [];
    const attributes = selectedAttributes(workflowResource, fields);
    // Only the rendered columns: a workflow's graph is read only when fields[workflow] names it.
    const columns = ['id', ...attributes.map((name) => columnOf(workflowResource, name))].map((c) => `workflows.${c}` as 'workflows.id');
    const workflows = (await new WorkflowRepository(ctx.db, request.auth.workspace.id)
      .selectBase()
      .select(columns)
      .where('workflows.id', 'in', ids)
      .execute()) as Row[];
    const byId = new Map(workflows.map((row) => [String(row.id), row]));
    return ids.flatMap((id) => {
      const row = byId.get(id);
      return row ? [toResourceObject(workflowResource, row, attributes, apiUrl(ctx, `/workflows/${id}`))] : [];
    });
  };

  const listExecutions = (
    request: FastifyRequest,
    reply: FastifyReply,
    base: ReturnType<ExecutionRepository['selectBase']>,
    path: string,
  ) => {
    const fields = fieldsOnce(request, [executionResource, workflowResource]);
    return sendList(request, reply, ctx, {
      definition: executionResource,
      base,
      path,
      extraColumns: ['workflow_id'],
      toResource: (row) => executionObject(row, fields()),
      included: (rows) => includedWorkflows(request, rows, fields()),
      includedDefinitions: [workflowResource],
    });
  };

  app.get(
    '/executions',
    {
      schema: {
        tags,
        summary: 'List the executions of the workspace, newest first',
        querystring: LIST_QUERY_SCHEMA,
        response: { 200: executionList, ...errors },
      },
    },
    async (request, reply) => listExecutions(request, reply, repoOf(request).selectBase(), '/executions'),
  );

  app.get(
    '/executions/:id',
    {
      schema: {
        tags,
        summary: 'Read an execution (heavy payloads through fields[execution])',
        params: ID_PARAMS_SCHEMA,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: singleDocumentSchema(executionResource, EXECUTION_RELATIONSHIPS, [workflowResource]), ...errors },
      },
    },
    async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
      const row = (await findExecution(repoOf(request), request.params.id)) as unknown as Row;
      const fields = parseFields((request.query as Query).fields, [executionResource, workflowResource]);
      return sendResource(reply, executionObject(row, fields), await includedWorkflows(request, [row], fields));
    },
  );

  app.post(
    '/executions/:id/cancel',
    {
      schema: {
        tags,
        summary: 'Cancel a pending, running or waiting execution (409 when it already ended)',
        params: ID_PARAMS_SCHEMA,
        body: actionBodySchema(),
        querystring: SINGLE_QUERY_SCHEMA,
        response: {
          200: singleDocumentSchema(executionResource, EXECUTION_RELATIONSHIPS, [workflowResource]),
          409: ERROR_RESPONSE_SCHEMA,
          ...errors,
        },
      },
    },
    async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
      readActionData(request.body);
      const row = (await ctx.executions.cancel(actorOf(request), request.params.id)) as unknown as Row;
      const fields = parseFields((request.query as Query).fields, [executionResource, workflowResource]);
      return sendResource(reply, executionObject(row, fields), await includedWorkflows(request, [row], fields));
    },
  );

  app.post(
    '/executions/:id/retry',
    {
      config: { plainJson: true },
      schema: {
        tags,
        summary: 'Run a failed execution again from its failed step, as a new execution linked to it (completed steps keep their outputs)',
        params: ID_PARAMS_SCHEMA,
        body: actionBodySchema(),
        response: { 202: RUN_RESPONSE_SCHEMA, 409: ERROR_RESPONSE_SCHEMA, ...errors },
      },
    },
    async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
      readActionData(request.body);
      const answer = await ctx.executions.retry(actorOf(request), request.params.id);
      return reply.code(202).type('application/json').send(answer);
    },
  );

  app.get(
    '/workflows/:workflow_id/executions',
    {
      schema: {
        tags,
        summary: 'List the executions of one workflow, newest first',
        params: WORKFLOW_PARAMS,
        querystring: LIST_QUERY_SCHEMA,
        response: { 200: executionList, ...errors },
      },
    },
    async (request: FastifyRequest<{ Params: { workflow_id: string } }>, reply) => {
      const workflow = await ctx.workflows.get(actorOf(request), request.params.workflow_id);
      const base = repoOf(request).selectBase().where('executions.workflow_id', '=', workflow.id);
      return listExecutions(request, reply, base, `/workflows/${workflow.id}/executions`);
    },
  );

  app.get(
    '/executions/:workflow_execution_id/steps',
    {
      schema: {
        tags,
        summary: 'List the steps of one execution in the order they ran',
        params: STEPS_PARAMS,
        querystring: LIST_QUERY_SCHEMA,
        response: {
          200: listDocumentSchema(executionStepResource, EXECUTION_STEP_RELATIONSHIPS, [
            { definition: executionResource, relationships: EXECUTION_RELATIONSHIPS },
          ]),
          ...errors,
        },
      },
    },
    async (request: FastifyRequest<{ Params: { workflow_execution_id: string } }>, reply) => {
      const repo = repoOf(request);
      const execution = (await findExecution(repo, request.params.workflow_execution_id)) as unknown as Row;
      const fields = fieldsOnce(request, [executionStepResource, executionResource]);
      return sendList(request, reply, ctx, {
        definition: executionStepResource,
        base: repo.selectSteps(String(execution.id)),
        path: `/executions/${String(execution.id)}/steps`,
        extraColumns: ['workflow_execution_id'],
        toResource: (row) => stepObject(row, fields()),
        includedDefinitions: [executionResource],
        // Every step of the page belongs to this execution: it is the one resource to include.
        included: async (rows) => {
          const include = parseInclude((request.query as Query).include, executionStepResource, ['workflow_execution']);
          if (!include.includes('workflow_execution')) return undefined;
          return rows.length === 0 ? [] : [executionObject(execution, fields())];
        },
      });
    },
  );
}
