import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type ApiContext, apiUrl } from '../../api-context.js';
import { readActionData, readResourceDocument } from '../../jsonapi/request-document.js';
import { parseFields, selectedAttributes } from '../../jsonapi/fields.js';
import { rejectInclude } from '../../jsonapi/include.js';
import { sendList, sendResource } from '../../jsonapi/respond.js';
import { toResourceObject } from '../../jsonapi/serialize.js';
import {
  ID_PARAMS_SCHEMA,
  LIST_QUERY_SCHEMA,
  listDocumentSchema,
  RESOURCE_ERRORS,
  SINGLE_QUERY_SCHEMA,
  singleDocumentSchema,
} from '../../jsonapi/resource-schemas.js';
import { MemoryRepository, type MemoryRow } from '../../../store/memory-repository.js';
import { actorOf } from '../workflows/workflow-routes.js';
import { memoryMessageResource, memoryResource, memorySessionResource } from './memory-resource.js';
import { CREATE_MEMORY_BODY, MESSAGE_BODY, UPDATE_MEMORY_BODY } from './memory-body-schemas.js';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;
type SessionRequest = FastifyRequest<{ Params: { id: string; key: string } }>;
const single = singleDocumentSchema(memoryResource);
const errors = RESOURCE_ERRORS;
const tags = ['Memories'];
const SESSION_PARAMS = {
  type: 'object',
  required: ['id', 'key'],
  properties: { id: { type: 'string' }, key: { type: 'string', description: "the caller's session key (URL-encoded)" } },
} as const;
const SESSION_SUMMARY = {
  type: 'object',
  properties: {
    key: { type: 'string' },
    message_count: { type: 'integer' },
    window_tokens: { type: 'integer' },
    compaction_count: { type: 'integer' },
    compaction_due: { type: 'boolean' },
  },
} as const;
const MESSAGE_ANSWER = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    role: { type: 'string' },
    content: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    position: { type: 'integer' },
    tokens: { type: 'integer' },
    in_window: { type: 'boolean' },
    session: SESSION_SUMMARY,
  },
} as const;
const CONTEXT_MESSAGE = {
  type: 'object',
  properties: { role: { type: 'string' }, content: { type: 'string' }, created_at: { type: 'string' }, score: { type: 'number' } },
} as const;
const CONTEXT_ANSWER = {
  type: 'object',
  properties: {
    summary: { type: ['string', 'null'] },
    messages: { type: 'array', items: CONTEXT_MESSAGE },
    recalled: { type: 'array', items: CONTEXT_MESSAGE },
    tokens: { type: 'integer' },
  },
} as const;

export async function memoryRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const present = (request: FastifyRequest, row: MemoryRow) => {
    const query = request.query as { fields?: unknown; include?: unknown };
    rejectInclude(query.include, memoryResource);
    const fields = parseFields(query.fields, [memoryResource]);
    return toResourceObject(
      memoryResource,
      row as unknown as Record<string, unknown>,
      selectedAttributes(memoryResource, fields),
      apiUrl(ctx, `/memories/${row.id}`),
    );
  };
  const sessionPath = (memoryId: string, key: string) => `/memories/${memoryId}/sessions/${encodeURIComponent(key)}/messages`;

  app.get(
    '/memories',
    {
      schema: {
        tags,
        summary: 'List memories, oldest first',
        querystring: LIST_QUERY_SCHEMA,
        response: { 200: listDocumentSchema(memoryResource), ...errors },
      },
    },
    async (request, reply) =>
      sendList(request, reply, ctx, {
        definition: memoryResource,
        base: new MemoryRepository(ctx.db, request.auth.workspace.id).selectBase(),
        path: '/memories',
      }),
  );

  app.post(
    '/memories',
    {
      schema: {
        tags,
        summary: 'Create a memory (window, compaction, recall)',
        body: CREATE_MEMORY_BODY,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 201: single, ...errors },
      },
    },
    async (request, reply) => {
      const row = await ctx.memories.create(actorOf(request), readResourceDocument(request.body, 'memory'));
      reply.header('location', apiUrl(ctx, `/memories/${row.id}`));
      return sendResource(reply.code(201), present(request, row));
    },
  );

  app.get(
    '/memories/:id',
    {
      schema: {
        tags,
        summary: 'Read a memory: window, compaction and recall settings',
        params: ID_PARAMS_SCHEMA,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: single, ...errors },
      },
    },
    async (request: IdRequest, reply) => sendResource(reply, present(request, await ctx.memories.get(actorOf(request), request.params.id))),
  );

  app.patch(
    '/memories/:id',
    {
      schema: {
        tags,
        summary: "Change a memory's name or settings (they apply from the next message)",
        params: ID_PARAMS_SCHEMA,
        body: UPDATE_MEMORY_BODY,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: single, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      const input = readResourceDocument(request.body, 'memory', { id: request.params.id });
      return sendResource(reply, present(request, await ctx.memories.update(actorOf(request), request.params.id, input)));
    },
  );

  app.delete(
    '/memories/:id',
    {
      schema: {
        tags,
        summary: 'Delete a memory with its sessions',
        params: ID_PARAMS_SCHEMA,
        response: { 204: { type: 'null', description: 'deleted' }, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      await ctx.memories.remove(actorOf(request), request.params.id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/memories/:id/sessions',
    {
      schema: {
        tags,
        summary: "List a memory's sessions, oldest first",
        params: ID_PARAMS_SCHEMA,
        querystring: LIST_QUERY_SCHEMA,
        response: { 200: listDocumentSchema(memorySessionResource), ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      const memory = await ctx.memories.get(actorOf(request), request.params.id);
      const query = request.query as { fields?: unknown };
      const attributes = selectedAttributes(memorySessionResource, parseFields(query.fields, [memorySessionResource]));
      return sendList(request, reply, ctx, {
        definition: memorySessionResource,
        base: new MemoryRepository(ctx.db, request.auth.workspace.id).selectSessions(memory.id),
        path: `/memories/${memory.id}/sessions`,
        extraColumns: ['session_key'],
        toResource: (row) =>
          toResourceObject(memorySessionResource, row, attributes, apiUrl(ctx, sessionPath(memory.id, String(row.session_key)))),
      });
    },
  );

  app.get(
    '/memories/:id/sessions/:key/messages',
    {
      schema: {
        tags,
        summary: "Read a session's stored messages, oldest first (in_window: still in the prompt)",
        params: SESSION_PARAMS,
        querystring: LIST_QUERY_SCHEMA,
        response: { 200: listDocumentSchema(memoryMessageResource), ...errors },
      },
    },
    async (request: SessionRequest, reply) => {
      const { memory, session } = await ctx.memories.session(actorOf(request), request.params.id, request.params.key);
      const query = request.query as { fields?: unknown };
      const attributes = selectedAttributes(memoryMessageResource, parseFields(query.fields, [memoryMessageResource]));
      const path = sessionPath(memory.id, session.session_key);
      return sendList(request, reply, ctx, {
        definition: memoryMessageResource,
        base: new MemoryRepository(ctx.db, request.auth.workspace.id).selectMessages(session.id),
        path,
        toResource: (row) =>
          toResourceObject(memoryMessageResource, row, attributes, apiUrl(ctx, `${path}?filter%5Bposition%5D=${String(row.position)}`)),
        extraColumns: ['position'],
      });
    },
  );

  app.post(
    '/memories/:id/sessions/:key/messages',
    {
      config: { plainJson: true },
      schema: {
        tags,
        summary: 'Append a message to a session (created on its first message); compaction runs when the threshold is crossed',
        params: SESSION_PARAMS,
        body: MESSAGE_BODY,
        response: { 201: MESSAGE_ANSWER, ...errors },
      },
    },
    async (request: SessionRequest, reply) => {
      const { message, session } = await ctx.memories.append(
        actorOf(request),
        request.params.id,
        request.params.key,
        readActionData(request.body),
      );
      reply.header('location', apiUrl(ctx, sessionPath(request.params.id, session.session_key)));
      return reply
        .code(201)
        .type('application/json')
        .send({
          id: message.id,
          role: message.role,
          content: message.content,
          created_at: message.created_at,
          position: message.position,
          tokens: message.tokens,
          in_window: Boolean(message.in_window),
          session: {
            key: session.session_key,
            message_count: session.message_count,
            window_tokens: session.window_tokens,
            compaction_count: session.compaction_count,
            compaction_due: Boolean(session.compaction_due),
          },
        });
    },
  );

  app.delete(
    '/memories/:id/sessions/:key/messages',
    {
      schema: {
        tags,
        summary: 'Clear a session: every message, and the session itself',
        params: SESSION_PARAMS,
        response: { 204: { type: 'null', description: 'cleared' }, ...errors },
      },
    },
    async (request: SessionRequest, reply) => {
      await ctx.memories.clear(actorOf(request), request.params.id, request.params.key);
      return reply.code(204).send();
    },
  );

  app.get(
    '/memories/:id/sessions/:key/context',
    {
      config: { plainJson: true },
      schema: {
        tags,
        summary: 'The prompt context an agent gets from this session: summary, window and (with ?query=) recalled messages',
        params: SESSION_PARAMS,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { query: { type: 'string', description: 'the text recall compares stored messages with' } },
        },
        response: { 200: CONTEXT_ANSWER, ...errors },
      },
    },
    async (request: SessionRequest, reply) => {
      const query = (request.query as { query?: string }).query;
      return reply
        .type('application/json')
        .send(await ctx.memories.context(actorOf(request), request.params.id, request.params.key, query));
    },
  );
}
