import { DOCUMENT_FORM, resourceBodySchema } from '../../jsonapi/resource-schemas.js';
import { dataBodyForm, idOrNull, NAME } from '../body-schemas.js';
import { SERVICE_FOLDER_DOCUMENT_SCHEMA } from '../workflows/document-schemas.js';

/** Request bodies of the folder routes, with exactly what FolderService and FolderDocuments read. */
const RELATIONSHIPS = { parent: 'workflow-folder' };
const PARENT = idOrNull('a root folder of this workspace to nest it in (folders are one level deep); null: the root');
const SIBLING = 'a sibling to place it just before; give before_id or after_id, not both, and neither with position';

/** POST /folders: FolderService.create. */
export const CREATE_FOLDER_BODY = resourceBodySchema(
  'workflow-folder',
  { name: NAME, parent_id: PARENT },
  { required: ['name'], relationships: RELATIONSHIPS },
);

/** PATCH /folders/:id renames only; reorder moves. */
export const RENAME_FOLDER_BODY = resourceBodySchema('workflow-folder', { name: NAME });

/** PATCH /folders/:id/reorder: FolderService.reorder. */
export const REORDER_FOLDER_BODY = resourceBodySchema(
  'workflow-folder',
  {
    before_id: idOrNull(SIBLING),
    after_id: idOrNull(SIBLING.replace('before', 'after')),
    position: { type: 'number', description: 'the position itself, instead of before_id or after_id' },
    parent_id: { ...PARENT, description: `${PARENT.description}; absent: it stays under its parent` },
  },
  { relationships: RELATIONSHIPS },
);

const IMPORT_MEMBERS = {
  document: {
    description: 'a service-folder/v1 document, or an n8n export:workflow list (all into one new folder)',
    anyOf: [
      { $ref: '#/components/schemas/ServiceFolderDocument' },
      { title: 'N8nWorkflowList', type: 'array', minItems: 1, items: { type: 'object', description: 'one n8n workflow' } },
    ],
  },
  parent_id: idOrNull('file the new folder under this root folder (documents without sub-folders only); null: the root'),
  name: { type: 'string', minLength: 1, maxLength: 200, description: "the new folder's name instead of the document's; not blank" },
};

/**
 * POST /folders/import. The framework checks the envelope and the member types; the document
 * itself is read by the service, which answers 422 with pointers into it.
 */
export const IMPORT_FOLDER_BODY = {
  type: 'object',
  required: ['data'],
  [DOCUMENT_FORM]: dataBodyForm(IMPORT_MEMBERS, ['document']),
  properties: {
    data: {
      type: 'object',
      required: ['document'],
      properties: {
        // Described, not validated here: the service reads it and answers 422 with pointers into it.
        document: {
          description: `a service-folder/v1 document (components.schemas.ServiceFolderDocument: ${SERVICE_FOLDER_DOCUMENT_SCHEMA.description}), or an n8n export:workflow list (all into one new folder)`,
        },
        parent_id: {
          type: ['string', 'null'],
          description: 'file the new folder under this root folder (documents without sub-folders only)',
        },
        name: { type: 'string', description: "the new folder's name instead of the document's" },
      },
    },
  },
};
