import { APP_PROVIDERS, WORKFLOW_STATUSES } from '../../../db/schema.js';
import { DOCUMENT_FORM } from '../../jsonapi/resource-schemas.js';

/**
 * OpenAPI schemas of the workflow documents (docs/import.md) and of the call graph answers.
 * They also drive response serialisation, so every open-ended part (node configs, settings)
 * allows any members.
 */
const OPEN = { type: 'object', additionalProperties: true } as const;
const POINTERS = { type: 'array', items: { type: 'string', description: 'JSON pointer into `graph`' } } as const;

export const SERVICE_DOCUMENT_SCHEMA = {
  title: 'ServiceDocument',
  description:
    'A workflow as a portable `service/v1` document: no workspace, user, execution, webhook, store, memory, knowledge-base or connection id, no webhook token or HMAC secret. Referenced resources are named in `references` with the graph pointers that use them (those fields are null in `graph`).',
  type: 'object',
  required: ['format', 'export_key', 'name', 'graph', 'settings', 'references'],
  properties: {
    format: { type: 'string', const: 'service/v1' },
    exported_at: { type: 'string', format: 'date-time' },
    export_key: { type: 'string', description: "the workflow's portable name: kept on import when free, and how other documents name it" },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    build_mode: { type: 'string', enum: ['guided', 'advanced'] },
    build_prompt: { type: ['string', 'null'] },
    ai_auto_probe: { type: 'boolean' },
    graph: {
      type: 'object',
      additionalProperties: true,
      properties: {
        nodes: { type: 'array', items: OPEN },
        edges: { type: 'array', items: OPEN },
        annotations: { type: 'array', items: OPEN, description: 'canvas notes (imported n8n sticky notes), never run' },
      },
    },
    settings: {
      ...OPEN,
      description: 'the graph settings (concurrency_limit, save_step_payloads), and error_workflow when the workflow names one',
      properties: {
        error_workflow: {
          type: 'string',
          description:
            'the export key of the workflow started when an execution of this one fails (error_workflow_id), when it names one: bound by export key on import (never a graph setting), or listed under requirements.bindings (attribute error_workflow_id)',
        },
      },
    },
    references: {
      type: 'object',
      properties: {
        workflows: {
          type: 'array',
          items: { type: 'object', properties: { export_key: { type: 'string' }, name: { type: 'string' }, pointers: POINTERS } },
        },
        stores: {
          type: 'array',
          items: { type: 'object', properties: { slug: { type: 'string' }, name: { type: 'string' }, pointers: POINTERS } },
        },
        memories: { type: 'array', items: { type: 'object', properties: { pointers: POINTERS } } },
        knowledge_bases: { type: 'array', items: { type: 'object', properties: { pointers: POINTERS } } },
        installations: {
          type: 'array',
          description:
            'nodes that work through a provider installation (app_event, chat_reply: Slack; sms: Twilio; email: Mailgun or Postmark): any one of `providers` serves, for `account_id` when a node pins one; an import lists the ones the workspace lacks under requirements.bindings',
          items: {
            type: 'object',
            properties: {
              providers: { type: 'array', items: { type: 'string', enum: [...APP_PROVIDERS] } },
              account_id: { type: 'string', description: 'the provider account a node pins (chat_reply team_id)' },
              pointers: { ...POINTERS, description: 'the nodes (`/nodes/3`) that need it' },
            },
          },
        },
      },
    },
  },
} as const;

export const SERVICE_FOLDER_DOCUMENT_SCHEMA = {
  title: 'ServiceFolderDocument',
  description:
    'A folder as a portable `service-folder/v1` document: its workflows, its sub-folders (one level deep) with theirs, and the calls among them by export key.',
  type: 'object',
  required: ['format', 'name', 'workflows', 'folders', 'calls'],
  properties: {
    format: { type: 'string', const: 'service-folder/v1' },
    exported_at: { type: 'string', format: 'date-time' },
    name: { type: 'string' },
    workflows: { type: 'array', items: SERVICE_DOCUMENT_SCHEMA },
    folders: {
      type: 'array',
      items: { type: 'object', properties: { name: { type: 'string' }, workflows: { type: 'array', items: SERVICE_DOCUMENT_SCHEMA } } },
    },
    calls: {
      type: 'array',
      items: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 2, description: '[caller export key, callee export key]' },
    },
  },
} as const;

const CALL_ENTRY = {
  type: 'object',
  properties: { id: { type: 'string', format: 'uuid' }, name: { type: 'string' }, active: { type: 'boolean' } },
} as const;

export const CALLS_RESPONSE_SCHEMA = {
  description: "plain JSON (application/json): distinct callers and callees; a live canvas counts, and an active workflow's snapshot",
  type: 'object',
  properties: { callers: { type: 'array', items: CALL_ENTRY }, callees: { type: 'array', items: CALL_ENTRY } },
} as const;

const MAP_ENTRY = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    active: { type: 'boolean' },
    folder_id: { type: ['string', 'null'] },
  },
} as const;

export const MAP_RESPONSE_SCHEMA = {
  description: 'plain JSON (application/json): systems of workflows connected through calls, and the standalone rest (docs/calls.md)',
  type: 'object',
  properties: {
    systems: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          columns: { type: 'array', items: { type: 'array', items: MAP_ENTRY }, description: 'one column per call depth, entries first' },
          edges: { type: 'array', items: { type: 'array', items: { type: 'string' } }, description: '[caller_id, callee_id]' },
          folder: {
            anyOf: [{ type: 'null' }, { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } } }],
            description: 'the folder most members are filed in (null: the root)',
          },
          strays: { type: 'array', items: { type: 'string' }, description: 'members filed elsewhere' },
          cycles: { type: 'array', items: { type: 'array', items: { type: 'string' } }, description: 'members of each cycle of calls' },
        },
      },
    },
    standalone: { type: 'array', items: MAP_ENTRY },
  },
} as const;

export const MAP_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    search: {
      type: 'string',
      description: 'keep systems and standalone workflows with a member whose name contains this (case-insensitive)',
    },
    status: {
      type: 'string',
      description: 'only members with this status (active, inactive); systems are formed among them',
      [DOCUMENT_FORM]: {
        type: 'string',
        enum: [...WORKFLOW_STATUSES],
        description: 'only members with this status; systems are formed among them',
      },
    },
  },
} as const;

export const EXPORT_RESPONSE_SCHEMA = {
  ...SERVICE_DOCUMENT_SCHEMA,
  description: 'plain JSON (application/json): the `service/v1` document (components.schemas.ServiceDocument)',
};
export const FOLDER_EXPORT_RESPONSE_SCHEMA = {
  ...SERVICE_FOLDER_DOCUMENT_SCHEMA,
  description: 'plain JSON (application/json): the `service-folder/v1` document (components.schemas.ServiceFolderDocument)',
};
