import { APP_PROVIDERS } from '../../../db/schema.js';
import type { ResourceDefinition } from '../../jsonapi/resource-definition.js';

/** An installation of a provider app in this workspace; its credentials are never shown. */
export const appInstallationResource: ResourceDefinition = {
  type: 'app-installation',
  table: 'app_installations',
  defaultSort: 'created_at',
  attributes: {
    provider: { kind: 'enum', values: APP_PROVIDERS, default: true },
    account_id: { kind: 'string', default: true },
    bot_user_id: { kind: 'string', nullable: true, default: true },
    bot_id: { kind: 'string', nullable: true, default: true },
    created_at: { kind: 'timestamp', default: true },
    updated_at: { kind: 'timestamp', default: true },
    workspace_id: { kind: 'uuid' },
  },
};
