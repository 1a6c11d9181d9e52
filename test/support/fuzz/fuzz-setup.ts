import { randomBytes } from 'node:crypto';
import { operationsOf, type Schema } from './openapi-operations.js';
import { JSONAPI, seedWorkspace, type Send } from './fuzz-seed.js';
import type { FuzzContext } from './fuzz-requests.js';
import type { ForeignData } from './fuzz-checks.js';

/**
 * Everything a fuzz run needs, built over any `send`: both workspaces seeded, the operations
 * read from the OpenAPI document the server publishes, the step types from its catalog.
 */
export async function prepareFuzz(send: Send, tokens: FuzzContext['tokens'], foreignToken: string): Promise<{ ctx: FuzzContext; foreign: ForeignData }> {
  const marker = `foreign-${randomBytes(6).toString('hex')}`;
  const own = await seedWorkspace(send, tokens.build, 'own');
  const other = await seedWorkspace(send, foreignToken, marker);
  const read = async (url: string, token?: string) => {
    const response = await send({ method: 'GET', url, headers: { accept: JSONAPI, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
    if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}`);
    return JSON.parse(response.body);
  };
  const document = (await read('/api/docs/openapi.json')) as Schema;
  const me = await read('/api/v1/me', foreignToken);
  const steps = await read('/api/v1/step-templates?fields[step-template]=slug&page[limit]=500', tokens.build);
  const ctx: FuzzContext = { operations: operationsOf(document), own, foreign: other, tokens, stepTypes: steps.data.map((s: { id: string }) => s.id) };
  const foreign: ForeignData = { marker, ids: [...other.workflow, ...other.folder, ...other.execution, ...other.webhook, me.data.id, me.data.attributes.workspace.id], sent: new Set() };
  return { ctx, foreign };
}
