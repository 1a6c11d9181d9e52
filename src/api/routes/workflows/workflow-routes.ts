import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type ApiContext, apiUrl } from '../../api-context.js';
import { readActionData, readResourceDocument } from '../../jsonapi/request-document.js';
import { parseFields, selectedAttributes } from '../../jsonapi/fields.js';
import { rejectInclude } from '../../jsonapi/include.js';
import { sendList, sendResource } from '../../jsonapi/respond.js';
import { toResourceObject } from '../../jsonapi/serialize.js';
import {
  ERROR_RESPONSE_SCHEMA,
  ID_PARAMS_SCHEMA,
  LIST_QUERY_SCHEMA,
  listDocumentSchema,
  SINGLE_QUERY_SCHEMA,
  singleDocumentSchema,
} from '../../jsonapi/resource-schemas.js';
import type { WorkflowRow } from '../../../store/workflow-repository.js';
import { WorkflowRepository } from '../../../store/workflow-repository.js';
import type { Actor } from '../../../services/workflows/workflow-service.js';
import { workflowResource } from './workflow-resource.js';
import { GRAPH_BODY_SCHEMA, GRAPH_RESPONSE_SCHEMA, RUN_BODY_SCHEMA, RUN_RESPONSE_SCHEMA } from './graph-schemas.js';
import { CREATE_WORKFLOW_BODY_SCHEMA, IMPORT_META_SCHEMA } from './import-schemas.js';
import { MOVE_WORKFLOW_BODY, UPDATE_WORKFLOW_BODY, WORKFLOW_ACTION_BODY } from './workflow-body-schemas.js';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

const single = singleDocumentSchema(workflowResource);
const created = { ...single, properties: { ...single.properties, meta: IMPORT_META_SCHEMA } };
const errors = {
  400: ERROR_RESPONSE_SCHEMA,
  401: ERROR_RESPONSE_SCHEMA,
  403: ERROR_RESPONSE_SCHEMA,
  404: ERROR_RESPONSE_SCHEMA,
  422: ERROR_RESPONSE_SCHEMA,
};
const tags = ['Workflows'];

export function actorOf(request: FastifyRequest): Actor {
  return { workspaceId: request.auth.workspace.id, userId: request.auth.user.id };
}

export async function workflowRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const present = (request: FastifyRequest, row: WorkflowRow) => {
    const query = request.query as { fields?: unknown; include?: unknown };
    rejectInclude(query.include, workflowResource);
    const fields = parseFields(query.fields, [workflowResource]);
    return toResourceObject(
      workflowResource,
      row as unknown as Record<string, unknown>,
      selectedAttributes(workflowResource, fields),
      apiUrl(ctx, `/workflows/${row.id}`),
    );
  };

  app.get(
    '/workflows',
    {
      schema: {
        tags,
        summary: 'List workflows, newest first',
        querystring: LIST_QUERY_SCHEMA,
        response: { 200: listDocumentSchema(workflowResource), ...errors },
      },
    },
    async (request, reply) => {
      const repo = new WorkflowRepository(ctx.db, request.auth.workspace.id);
      return sendList(request, reply, ctx, { definition: workflowResource, base: repo.selectBase(), path: '/workflows' });
    },
  );

  app.post(
    '/workflows',
    {
      schema: {
        tags,
        summary:
          'Create a workflow: bare (name), or imported from a document (a service/v1 export, an n8n workflow, a bare {nodes, edges} graph)',
        description:
          "With `document`, the answer's `meta` reports what is left to finish: `placeholders` (nodes no step could take) and `requirements` by kind (credentials, secrets, bindings, expressions, provider_keys), each with a pointer into `graph`; `webhook_tokens` shows the new webhook nodes' bearer tokens once (docs/import.md).",
        body: CREATE_WORKFLOW_BODY_SCHEMA,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 201: created, ...errors },
      },
    },
    async (request, reply) => {
      const input = readResourceDocument(request.body, 'workflow', { relationships: { folder: 'workflow-folder' } });
      if (input.values.document !== undefined) {
        const { workflow, meta } = await ctx.imports.importWorkflow(actorOf(request), input);
        reply.header('location', apiUrl(ctx, `/workflows/${workflow.id}`));
        return sendResource(reply.code(201), present(request, workflow), undefined, meta as unknown as Record<string, unknown>);
      }
      const row = await ctx.workflows.create(actorOf(request), input);
      reply.header('location', apiUrl(ctx, `/workflows/${row.id}`));
      return sendResource(reply.code(201), present(request, row));
    },
  );

  app.get(
    '/workflows/:id',
    {
      schema: {
        tags,
        summary: 'Read a workflow',
        params: ID_PARAMS_SCHEMA,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: single, ...errors },
      },
    },
    async (request: IdRequest, reply) =>
      sendResource(reply, present(request, await ctx.workflows.get(actorOf(request), request.params.id))),
  );

  app.patch(
    '/workflows/:id',
    {
      schema: {
        tags,
        summary: 'Rename a workflow, change its description or set its error workflow (error_workflow_id)',
        params: ID_PARAMS_SCHEMA,
        body: UPDATE_WORKFLOW_BODY,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: single, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      const input = readResourceDocument(request.body, 'workflow', { id: request.params.id });
      return sendResource(reply, present(request, await ctx.workflows.update(actorOf(request), request.params.id, input)));
    },
  );

  app.delete(
    '/workflows/:id',
    {
      schema: {
        tags,
        summary: 'Delete a workflow',
        params: ID_PARAMS_SCHEMA,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 204: { type: 'null', description: 'deleted' }, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      await ctx.workflows.remove(actorOf(request), request.params.id);
      return reply.code(204).send();
    },
  );

  for (const action of ['activate', 'deactivate'] as const) {
    app.post(
      `/workflows/:id/${action}`,
      {
        schema: {
          tags,
          summary:
            action === 'activate'
              ? 'Validate the canvas and freeze it into the snapshot the workflow runs'
              : 'Stop the triggers (the snapshot is kept for audit)',
          params: ID_PARAMS_SCHEMA,
          body: WORKFLOW_ACTION_BODY,
          querystring: SINGLE_QUERY_SCHEMA,
          response: { 200: single, ...errors },
        },
      },
      async (request: IdRequest, reply) => {
        readActionData(request.body);
        const row = await ctx.workflows[action](actorOf(request), request.params.id);
        return sendResource(reply, present(request, row));
      },
    );
  }

  app.post(
    '/workflows/:id/duplicate',
    {
      schema: {
        tags,
        summary: 'Copy a workflow as "<name> (copy)", inactive',
        params: ID_PARAMS_SCHEMA,
        body: WORKFLOW_ACTION_BODY,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 201: single, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      readActionData(request.body);
      const row = await ctx.workflows.duplicate(actorOf(request), request.params.id);
      reply.header('location', apiUrl(ctx, `/workflows/${row.id}`));
      return sendResource(reply.code(201), present(request, row));
    },
  );

  app.patch(
    '/workflows/:id/move',
    {
      schema: {
        tags,
        summary: 'File a workflow into a folder (or the root) and order it among its siblings',
        params: ID_PARAMS_SCHEMA,
        body: MOVE_WORKFLOW_BODY,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: single, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      const input = readResourceDocument(request.body, 'workflow', { id: request.params.id, relationships: { folder: 'workflow-folder' } });
      return sendResource(reply, present(request, await ctx.workflows.move(actorOf(request), request.params.id, input)));
    },
  );

  app.post(
    '/workflows/:id/run',
    {
      config: { plainJson: true, jsonTextBody: true },
      schema: {
        tags,
        summary: 'Start an execution: an active workflow runs its snapshot; draft: true runs the live canvas',
        params: ID_PARAMS_SCHEMA,
        body: RUN_BODY_SCHEMA,
        response: { 202: RUN_RESPONSE_SCHEMA, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      const answer = await ctx.executions.run(actorOf(request), request.params.id, readActionData(request.body));
      return reply.code(202).type('application/json').send(answer);
    },
  );

  app.put(
    '/workflows/:id/graph',
    {
      config: { plainJson: true },
      schema: {
        tags,
        summary: 'Replace the live canvas graph (auto-layout unless layout is false)',
        params: ID_PARAMS_SCHEMA,
        body: GRAPH_BODY_SCHEMA,
        response: { 200: GRAPH_RESPONSE_SCHEMA, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      const { workflow, graph, layout, webhookTokens } = await ctx.workflows.putGraph(
        actorOf(request),
        request.params.id,
        (request.body as { data?: unknown }).data,
      );
      return reply
        .type('application/json')
        .send({ workflow_id: workflow.id, graph, layout, updated_at: workflow.updated_at, webhook_tokens: webhookTokens });
    },
  );
}
