import { BUILD_MODES } from '../../../db/schema.js';
import { REQUIREMENT_KINDS } from '../../../documents/import-report.js';
import { N8N_SHAPES } from '../../../documents/n8n/n8n-document.js';
import { DOCUMENT_FORM, resourceBodySchema } from '../../jsonapi/resource-schemas.js';
import { DESCRIPTION } from '../body-schemas.js';
import { SERVICE_DOCUMENT_SCHEMA } from './document-schemas.js';

/**
 * OpenAPI schemas of `POST /workflows` (create bare, or import a document) and of the import
 * report in its answer (docs/import.md). The report is built by the service and serialised by
 * these schemas, so every object in it keeps members they do not name.
 */
const OPEN = { type: 'object', additionalProperties: true } as const;

const IMPORT_DOCUMENT = {
  description:
    'The document to import. Its format is decided from its structure alone, never guessed (docs/import.md): a `service/v1` export (components.schemas.ServiceDocument); one n8n workflow in any shape users have (editor download, clipboard copy, template, public-API object, CLI export:workflow output: one object, or a list holding one); or a bare `{nodes, edges}` graph. Anything else (several workflows, a folder document, both `connections` and `edges`) is 422 unsupported_document naming the accepted formats; a known format with malformed parts is 422 invalid_import with a pointer per problem into the document.',
  anyOf: [
    // `#/definitions/…` resolves inside this body schema for the validator, and the OpenAPI
    // generator rewrites it to `#/components/schemas/ServiceDocument` (the same schema).
    { $ref: '#/definitions/ServiceDocument' },
    {
      title: 'N8nWorkflow',
      description:
        'one n8n workflow: `{name?, nodes, connections, …}` (connections keyed by node names), the template shapes `{workflow: {nodes, connections}}`, or a list holding one workflow; mapped as docs/import.md tabulates',
      anyOf: [{ type: 'object' }, { type: 'array', items: { type: 'object' } }],
    },
    {
      title: 'Graph',
      description:
        "a bare graph in Switchyard's shape (as PUT /workflows/:id/graph takes it); ids it names are checked against the workspace, and it is laid out when no node has a position",
      type: 'object',
      required: ['nodes'],
      properties: {
        nodes: { type: 'array', items: OPEN },
        edges: { type: 'array', items: OPEN },
        annotations: { type: 'array', items: OPEN },
      },
    },
  ],
};

const ATTRIBUTES = {
  name: { type: 'string', maxLength: 200, description: "the name; with a document, instead of the document's" },
  description: { type: ['string', 'null'], maxLength: 10_000 },
  document: IMPORT_DOCUMENT,
  folder_id: {
    type: ['string', 'null'],
    format: 'uuid',
    description:
      "file the new workflow in this folder of the workspace (another workspace's folder is answered as an unknown one: 422 with a pointer)",
  },
};

const CREATE_DESCRIPTION =
  "`name` alone creates a bare workflow; `document` imports one (created inactive; the answer's `meta` is the import report).";
const BARE_ONLY = 'a bare create only: an import (with `document`) refuses it';

/**
 * What the create and the import read (WorkflowService.create, WorkflowImports.importWorkflow):
 * `name` is required without a document; ai_auto_probe, build_mode and build_prompt only
 * without one (the document carries its own).
 */
const CREATE_ATTRIBUTES = {
  name: {
    ...ATTRIBUTES.name,
    minLength: 1,
    description: `${ATTRIBUTES.name.description}; required without a document; trimmed, not blank`,
  },
  description: DESCRIPTION,
  ai_auto_probe: { type: 'boolean', description: `default false; ${BARE_ONLY}` },
  build_mode: { type: 'string', enum: [...BUILD_MODES], description: `default advanced; ${BARE_ONLY}` },
  build_prompt: { type: ['string', 'null'], maxLength: 20_000, description: `trimmed; ${BARE_ONLY}` },
  document: IMPORT_DOCUMENT,
  folder_id: ATTRIBUTES.folder_id,
};

/**
 * Either form DESIGN.md allows: the flat `{data: {name, description, document, folder_id}}`
 * the contract shows, or a JSON:API resource object. The schema describes; the service reads
 * the body and answers with a pointer per problem. Neither alternative constrains the other
 * form's members, so a body of one form passes the other alternative: the framework refuses
 * only a body mixing both forms, which the service refuses too. The document shows the exact
 * form (DOCUMENT_FORM), both alternatives closed.
 */
export const CREATE_WORKFLOW_BODY_SCHEMA = {
  type: 'object',
  required: ['data'],
  definitions: { ServiceDocument: SERVICE_DOCUMENT_SCHEMA },
  [DOCUMENT_FORM]: resourceBodySchema('workflow', CREATE_ATTRIBUTES, {
    relationships: { folder: 'workflow-folder' },
    description: CREATE_DESCRIPTION,
  })[DOCUMENT_FORM],
  properties: {
    data: {
      type: 'object',
      additionalProperties: true,
      description: CREATE_DESCRIPTION,
      anyOf: [
        { title: 'Flat', type: 'object', properties: ATTRIBUTES },
        {
          title: 'Resource object',
          type: 'object',
          properties: {
            type: { type: 'string', const: 'workflow' },
            attributes: { type: 'object', properties: ATTRIBUTES },
            relationships: {
              type: 'object',
              properties: {
                folder: {
                  type: 'object',
                  properties: {
                    data: {
                      type: ['object', 'null'],
                      properties: { type: { type: 'string', const: 'workflow-folder' }, id: { type: 'string' } },
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  },
};

const REQUIREMENT = {
  type: 'object',
  additionalProperties: true,
  description:
    "what to finish: `pointer` into the workflow's `graph` attribute, `detail`, and facts of its kind (credential_type and credential_name, resource with slug / export_key / providers, original values, …)",
  properties: { pointer: { type: 'string' }, detail: { type: 'string' } },
};

/** The import report: `meta` of `POST /workflows` with a document (ImportMeta in services/workflows/workflow-import.ts). */
export const IMPORT_META_SCHEMA = {
  type: 'object',
  additionalProperties: true,
  description:
    'With a document: the import report (docs/import.md "The import report"); every pointer is relative to the `graph` attribute. Absent for a bare workflow.',
  properties: {
    source: {
      type: 'object',
      additionalProperties: true,
      properties: {
        format: { type: 'string', enum: ['service/v1', 'n8n', 'graph'] },
        shape: { type: 'string', enum: [...N8N_SHAPES], description: 'n8n only: which export the document came from (informational)' },
        n8n_id: { type: ['string', 'null'] },
      },
    },
    placeholders: {
      type: 'array',
      description: 'nodes no step could take; activation refuses the workflow until each is replaced',
      items: {
        type: 'object',
        additionalProperties: true,
        properties: {
          node_id: { type: 'string' },
          original: {
            type: 'object',
            additionalProperties: true,
            properties: { name: { type: ['string', 'null'] }, type: { type: 'string' }, version: { type: ['number', 'string', 'null'] } },
          },
          reason: { type: 'string' },
          pointer: { type: 'string' },
        },
      },
    },
    requirements: {
      type: 'object',
      additionalProperties: true,
      description: 'what the user must finish before activating, by kind',
      properties: Object.fromEntries(REQUIREMENT_KINDS.map((kind) => [kind, { type: 'array', items: REQUIREMENT }])),
    },
    webhook_tokens: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'bearer tokens of the new webhook nodes by node id, shown once',
    },
    source_nodes: {
      type: 'array',
      description: 'n8n only: where every source node went',
      items: {
        type: 'object',
        additionalProperties: true,
        properties: {
          name: { type: 'string' },
          type: { type: 'string' },
          became: { type: 'string', enum: ['step', 'placeholder', 'annotation', 'sub_node'] },
          id: { type: 'string' },
        },
      },
    },
  },
};

/** `meta` of `POST /folders/import`: every folder made, and each workflow with its import report. */
export const FOLDER_IMPORT_META_SCHEMA = {
  type: 'object',
  additionalProperties: true,
  properties: {
    folders: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: true,
        properties: { id: { type: 'string' }, name: { type: 'string' }, parent_id: { type: ['string', 'null'] } },
      },
    },
    workflows: {
      type: 'array',
      items: {
        ...IMPORT_META_SCHEMA,
        description: 'a workflow created: its id, name, export key and folder, and its import report',
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          export_key: { type: 'string' },
          folder_id: { type: 'string' },
          ...IMPORT_META_SCHEMA.properties,
        },
      },
    },
  },
};
