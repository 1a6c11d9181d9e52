import { CONNECTION_PROVIDERS } from '../../../db/schema.js';
import { resourceBodySchema } from '../../jsonapi/resource-schemas.js';
import { NAME } from '../body-schemas.js';

/** Request bodies of the connection routes, with exactly what ConnectionService reads. */
const DESCRIPTION = 'attributes provider (openai, anthropic, openai_compatible), name, base_url, api_key (write-only)';

const BASE_URL = {
  type: ['string', 'null'],
  maxLength: 2000,
  description:
    "an absolute http(s) URL, e.g. http://127.0.0.1:11434/v1: no credentials, query or fragment; a private, loopback or reserved address literal only when SWITCHYARD_HTTP_ALLOW lists it; trailing slashes dropped; null or '' for none (required for openai_compatible)",
};
const API_KEY = {
  type: ['string', 'null'],
  minLength: 1,
  maxLength: 4000,
  writeOnly: true,
  description: 'write-only: sealed, never returned (has_api_key says whether one is set); not blank; null removes it',
};

/** POST /connections: the provider is chosen once. */
export const CREATE_CONNECTION_BODY = {
  ...resourceBodySchema(
    'connection',
    { provider: { type: 'string', enum: [...CONNECTION_PROVIDERS] }, name: NAME, base_url: BASE_URL, api_key: API_KEY },
    { required: ['provider', 'name'] },
  ),
  description: DESCRIPTION,
};

/** PATCH /connections/:id: the provider cannot change. */
export const UPDATE_CONNECTION_BODY = {
  ...resourceBodySchema('connection', { name: NAME, base_url: BASE_URL, api_key: API_KEY }),
  description: 'attributes name, base_url, api_key (write-only); the provider cannot change',
};
