import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { TestApp, TestResponse } from './test-app.js';

/** An n8n fixture (test/fixtures/README.md says where each came from). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function n8nFixture(name: string): any {
  return JSON.parse(readFileSync(new URL(`../fixtures/n8n/${name}`, import.meta.url), 'utf8'));
}

/** POST /workflows with a document; the graph comes back with the answer. */
export function importDocument(t: TestApp, document: unknown, extra: Record<string, unknown> = {}, token?: string): Promise<TestResponse> {
  return t.request('POST', '/api/v1/workflows?fields[workflow]=name,description,graph,status,folder_id', {
    body: { data: { document, ...extra } },
    ...(token ? { token } : {}),
  });
}

export async function importOk(t: TestApp, document: unknown, extra: Record<string, unknown> = {}, token?: string) {
  const res = await importDocument(t, document, extra, token);
  expect(res.status, res.raw.slice(0, 2000)).toBe(201);
  return {
    id: res.body.data.id as string,
    attributes: res.body.data.attributes,
    meta: res.body.meta,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    graph: res.body.data.attributes.graph as { nodes: any[]; edges: any[]; annotations?: any[] },
  };
}

export async function exportOf(t: TestApp, id: string, token?: string) {
  const res = await t.request('GET', `/api/v1/workflows/${id}/export`, token ? { token } : {});
  expect(res.status, res.raw.slice(0, 2000)).toBe(200);
  return res.body;
}

/** Counts of the rows an import writes, to prove a refused one wrote none. */
export async function rowCounts(t: TestApp): Promise<Record<string, number>> {
  const count = async (table: 'workflows' | 'webhooks' | 'workflow_calls' | 'workflow_folders') =>
    Number(
      (
        await t.deps.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    workflows: await count('workflows'),
    webhooks: await count('webhooks'),
    calls: await count('workflow_calls'),
    folders: await count('workflow_folders'),
  };
}
