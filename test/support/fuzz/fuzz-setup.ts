import { randomBytes } from 'node:crypto';
import { operationsOf, type Schema } from './openapi-operations.js';
import { JSONAPI, seedWorkspace, type Send } from './fuzz-seed.js';
import type { FuzzContext } from './fuzz-requests.js';
import type { ForeignData } from './fuzz-checks.js';

/**
 * Everything a fuzz run needs, built over any `send`: both workspaces seeded, the operations
 * read from the OpenAPI document the server publishes, the step types from its catalog.
 */
export async function prepareFuzz(
  send: Send,
  tokens: FuzzContext['tokens'],
  foreignToken: string,
): Promise<{ ctx: FuzzContext; foreign: ForeignData }> {
  const marker = `foreign-${randomBytes(6).toString('hex')}`;
  const own = await seedWorkspace(send, tokens.build, 'own');
  const other = await seedWorkspace(send, foreignToken, marker);
  const read = async (url: string, token?: string) => {
    const response = await send({
      method: 'GET',
      url,
      headers: { accept: JSONAPI, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    });
    if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}`);
    return JSON.parse(response.body);
  };
  const document = (await read('/api/docs/openapi.json')) as Schema;
  const me = await read('/api/v1/me', foreignToken);
  // One user may own both workspaces (the CLI gives new workspaces the first user): not theirs alone.
  const ownUser = (await read('/api/v1/me', tokens.build)).data.id;
  const steps = await read('/api/v1/step-templates?fields[step-template]=slug&page[limit]=500', tokens.build);
  // The last workflow and folder are kept for the cross-workspace pairs.
  const reserved = { workflow: own.workflow.slice(-1), folder: own.folder.slice(-1), execution: [], node: own.node, webhook: [] };
  const general = { ...own, workflow: own.workflow.slice(0, -1), folder: own.folder.slice(0, -1) };
  const ctx: FuzzContext = {
    operations: operationsOf(document),
    own: general,
    reserved,
    foreign: other,
    tokens,
    stepTypes: steps.data.map((s: { id: string }) => s.id),
  };
  const foreign: ForeignData = {
    marker,
    ids: [
      ...other.workflow,
      ...other.folder,
      ...other.execution,
      ...other.webhook,
      ...(me.data.id === ownUser ? [] : [me.data.id]),
      me.data.attributes.workspace.id,
    ],
    sent: new Set(),
  };
  return { ctx, foreign };
}
