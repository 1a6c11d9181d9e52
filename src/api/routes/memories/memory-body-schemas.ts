import { COMPACTION_MODES, MESSAGE_ROLES, RECALL_MODES } from '../../../db/schema.js';
import { DEFAULT_RECALL_TOP_K, DEFAULT_THRESHOLD_TOKENS, DEFAULT_WINDOW } from '../../../memory/memory-settings.js';
import { MAX_MESSAGE_BYTES } from '../../../services/memories/memory-service.js';
import { DOCUMENT_FORM, resourceBodySchema } from '../../jsonapi/resource-schemas.js';
import { dataBodyForm, NAME } from '../body-schemas.js';

/** Request bodies of the memory routes, with exactly what MemoryService reads. */
const THRESHOLD = {
  type: ['integer', 'null'],
  minimum: 50,
  maximum: 1_000_000,
  description: `the window's tokens that start a compaction; null or absent: ${DEFAULT_THRESHOLD_TOKENS}`,
};

/** A whole setting is replaced: a member left out takes its default, not its current value. */
const COMPACTION = {
  description: 'replaced whole: members left out take their defaults',
  anyOf: [
    {
      title: 'None or truncate',
      type: 'object',
      properties: {
        mode: {
          type: ['string', 'null'],
          enum: [...COMPACTION_MODES.filter((mode) => mode !== 'summarize'), null],
          description: 'null or absent: none',
        },
        threshold_tokens: THRESHOLD,
      },
      additionalProperties: false,
    },
    {
      title: 'Summarize',
      type: 'object',
      required: ['mode', 'connection_id', 'model'],
      properties: {
        mode: { type: 'string', const: 'summarize' },
        threshold_tokens: THRESHOLD,
        connection_id: { type: 'string', format: 'uuid', description: 'the connection of the model that writes summaries' },
        model: { type: 'string', minLength: 1, maxLength: 200, description: 'the model that writes summaries; not blank' },
      },
      additionalProperties: false,
    },
  ],
};

const RECALL = {
  type: 'object',
  description: 'replaced whole: members left out take their defaults',
  properties: {
    mode: { type: ['string', 'null'], enum: [...RECALL_MODES, null], description: 'null or absent: none' },
    top_k: {
      type: ['integer', 'null'],
      minimum: 1,
      maximum: 50,
      description: `messages recalled; null or absent: ${DEFAULT_RECALL_TOP_K}`,
    },
  },
};

const ATTRIBUTES = {
  name: NAME,
  window: { type: 'integer', minimum: 1, maximum: 1000, description: `messages kept in the prompt, default ${DEFAULT_WINDOW}` },
  compaction: COMPACTION,
  recall: RECALL,
};

/** POST /memories; PATCH applies from the next message on. */
export const CREATE_MEMORY_BODY = resourceBodySchema('memory', ATTRIBUTES, { required: ['name'] });
export const UPDATE_MEMORY_BODY = resourceBodySchema('memory', ATTRIBUTES);

const MESSAGE_MEMBERS = {
  role: { type: 'string', enum: [...MESSAGE_ROLES] },
  content: { type: 'string', description: `the message text; at most ${MAX_MESSAGE_BYTES / 1024} KiB as UTF-8` },
};

/** Values are checked by the service (422 with a pointer); the document shows them (DOCUMENT_FORM). */
export const MESSAGE_BODY = {
  type: 'object',
  required: ['data'],
  [DOCUMENT_FORM]: dataBodyForm(MESSAGE_MEMBERS, ['role', 'content']),
  properties: {
    data: {
      type: 'object',
      properties: {
        role: { description: 'user, assistant, system, tool or summary' },
        content: { description: 'the message text (a string)' },
      },
    },
  },
} as const;
