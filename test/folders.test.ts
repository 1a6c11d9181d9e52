import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

describeEachDialect('folders', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  const folder = async (name: string, parentId?: string) => {
    const body = parentId
      ? {
          data: {
            type: 'workflow-folder',
            attributes: { name },
            relationships: { parent: { data: { type: 'workflow-folder', id: parentId } } },
          },
        }
      : { data: { type: 'workflow-folder', attributes: { name } } };
    const res = await t.request('POST', '/api/v1/folders', { body });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; attributes: { name: string; parent_id: string | null; position: number } };
  };
  const workflow = async (name: string) =>
    (await t.request('POST', '/api/v1/workflows', { body: { data: { name } } })).body.data.id as string;
  const namesOf = (res: { body: { data: { attributes: { name: string } }[] } }) => res.body.data.map((d) => d.attributes.name);

  it('creates a folder and a child folder, through the relationship or parent_id', async () => {
    const parent = await folder('Sales');
    const child = await folder('Leads', parent.id);
    expect(child.attributes.parent_id).toBe(parent.id);
    const flat = await t.request('POST', '/api/v1/folders', { body: { data: { name: 'Deals', parent_id: parent.id } } });
    expect(flat.status).toBe(201);
    expect(flat.body.data.relationships.parent.data).toEqual({ type: 'workflow-folder', id: parent.id });
  });

  it('refuses a parent that is itself a child (one level deep) with 422', async () => {
    const top = await folder('Top');
    const mid = await folder('Mid', top.id);
    const res = await t.request('POST', '/api/v1/folders', { body: { data: { name: 'Deep', parent_id: mid.id } } });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].source.pointer).toBe('/data/parent_id');
    expect(res.body.errors[0].detail).toContain('one level deep');
  });

  it('includes the parent on request', async () => {
    const top = await folder('With child');
    const child = await folder('Child', top.id);
    const res = await t.request('GET', `/api/v1/folders/${child.id}?include=parent`);
    expect(res.status).toBe(200);
    expect(res.body.included).toHaveLength(1);
    expect(res.body.included[0]).toMatchObject({ type: 'workflow-folder', id: top.id });
    const bad = await t.request('GET', `/api/v1/folders/${child.id}?include=children`);
    expect(bad.status).toBe(400);
  });

  it('renames a folder and refuses other attributes', async () => {
    const f = await folder('Old');
    const res = await t.request('PATCH', `/api/v1/folders/${f.id}`, {
      body: { data: { type: 'workflow-folder', id: f.id, attributes: { name: 'New' } } },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.attributes.name).toBe('New');
    const refused = await t.request('PATCH', `/api/v1/folders/${f.id}`, {
      body: { data: { type: 'workflow-folder', id: f.id, attributes: { position: 3 } } },
    });
    expect(refused.status).toBe(422);
  });

  it('deletes a folder, moving its workflows and subfolders to the root', async () => {
    const f = await folder('Temporary');
    const sub = await folder('Sub', f.id);
    const wf = await workflow('Filed');
    expect(
      (
        await t.request('PATCH', `/api/v1/workflows/${wf}/move`, {
          body: { data: { type: 'workflow', id: wf, attributes: { folder_id: f.id } } },
        })
      ).status,
    ).toBe(200);
    expect((await t.request('DELETE', `/api/v1/folders/${f.id}`)).status).toBe(204);
    expect((await t.request('GET', `/api/v1/folders/${f.id}`)).status).toBe(404);
    expect((await t.request('GET', `/api/v1/workflows/${wf}?fields[workflow]=folder_id`)).body.data.attributes.folder_id).toBeNull();
    expect((await t.request('GET', `/api/v1/folders/${sub.id}`)).body.data.attributes.parent_id).toBeNull();
  });

  describe('reorder', () => {
    it('places a folder before or after a sibling with a computed sparse position', async () => {
      const parent = await folder('Ordering');
      const a = await folder('A', parent.id);
      const b = await folder('B', parent.id);
      const c = await folder('C', parent.id);
      const list = () => t.request('GET', `/api/v1/folders?filter[parent_id][eq]=${parent.id}`);
      expect(namesOf(await list())).toEqual(['A', 'B', 'C']);
      const moved = await t.request('PATCH', `/api/v1/folders/${c.id}/reorder`, {
        body: { data: { type: 'workflow-folder', id: c.id, attributes: { before_id: a.id } } },
      });
      expect(moved.status).toBe(200);
      expect(moved.body.data.attributes.position).toBeLessThan(a.attributes.position);
      expect(namesOf(await list())).toEqual(['C', 'A', 'B']);
      await t.request('PATCH', `/api/v1/folders/${c.id}/reorder`, {
        body: { data: { type: 'workflow-folder', id: c.id, attributes: { after_id: a.id } } },
      });
      expect(namesOf(await list())).toEqual(['A', 'C', 'B']);
      const between = (await t.request('GET', `/api/v1/folders/${c.id}`)).body.data.attributes.position;
      expect(between).toBeGreaterThan(a.attributes.position);
      expect(between).toBeLessThan(b.attributes.position);
    });

    it('keeps order through many moves into the same gap (renumbering when it runs out)', async () => {
      const parent = await folder('Squeeze');
      const a = await folder('A', parent.id);
      await folder('B', parent.id);
      const moving = [] as string[];
      for (let i = 0; i < 60; i += 1) moving.push((await folder(`M${i}`, parent.id)).id);
      for (const id of moving)
        await t.request('PATCH', `/api/v1/folders/${id}/reorder`, {
          body: { data: { type: 'workflow-folder', id, attributes: { after_id: a.id } } },
        });
      const names = namesOf(await t.request('GET', `/api/v1/folders?filter[parent_id][eq]=${parent.id}&page[limit]=100`));
      expect(names[0]).toBe('A');
      expect(names[1]).toBe('M59');
      expect(names.at(-1)).toBe('B');
    });

    it('takes a raw position, and reparents with parent_id', async () => {
      const p1 = await folder('P1');
      const p2 = await folder('P2');
      const child = await folder('Moving', p1.id);
      const raw = await t.request('PATCH', `/api/v1/folders/${child.id}/reorder`, {
        body: { data: { type: 'workflow-folder', id: child.id, attributes: { position: 12.5 } } },
      });
      expect(raw.body.data.attributes.position).toBe(12.5);
      const reparented = await t.request('PATCH', `/api/v1/folders/${child.id}/reorder`, {
        body: { data: { type: 'workflow-folder', id: child.id, attributes: { parent_id: p2.id } } },
      });
      expect(reparented.status).toBe(200);
      expect(reparented.body.data.attributes.parent_id).toBe(p2.id);
      const intoChild = await t.request('PATCH', `/api/v1/folders/${p1.id}/reorder`, {
        body: { data: { type: 'workflow-folder', id: p1.id, attributes: { parent_id: child.id } } },
      });
      expect(intoChild.status).toBe(422);
      const withChildren = await t.request('PATCH', `/api/v1/folders/${p2.id}/reorder`, {
        body: { data: { type: 'workflow-folder', id: p2.id, attributes: { parent_id: p1.id } } },
      });
      expect(withChildren.status).toBe(422);
    });

    it('answers 422 for a neighbour that is not a sibling', async () => {
      const p = await folder('Siblings');
      const x = await folder('X', p.id);
      const stranger = await folder('Stranger');
      const res = await t.request('PATCH', `/api/v1/folders/${x.id}/reorder`, {
        body: { data: { type: 'workflow-folder', id: x.id, attributes: { before_id: stranger.id } } },
      });
      expect(res.status).toBe(422);
      expect(res.body.errors[0].source.pointer).toBe('/data/attributes/before_id');
    });
  });

  describe('workflow move', () => {
    it('files workflows into a folder in before/after order and back to the root', async () => {
      const f = await folder('Filing');
      const [w1, w2, w3] = [await workflow('W1'), await workflow('W2'), await workflow('W3')];
      const move = (id: string, attributes: Record<string, unknown>) =>
        t.request('PATCH', `/api/v1/workflows/${id}/move`, { body: { data: { type: 'workflow', id, attributes } } });
      expect((await move(w1, { folder_id: f.id })).status).toBe(200);
      expect((await move(w2, { folder_id: f.id })).status).toBe(200);
      expect((await move(w3, { folder_id: f.id, before_id: w1 })).status).toBe(200);
      const inFolder = await t.request('GET', `/api/v1/workflows?filter[folder_id][eq]=${f.id}&sort=position`);
      expect(namesOf(inFolder)).toEqual(['W3', 'W1', 'W2']);
      await move(w3, { after_id: w2 });
      expect(namesOf(await t.request('GET', `/api/v1/workflows?filter[folder_id][eq]=${f.id}&sort=position`))).toEqual(['W1', 'W2', 'W3']);
      const root = await move(w1, { folder_id: null });
      expect(root.status).toBe(200);
      expect((await t.request('GET', `/api/v1/workflows/${w1}?fields[workflow]=folder_id`)).body.data.attributes.folder_id).toBeNull();
    });

    it('answers 422 for an unknown folder or a neighbour outside the target folder', async () => {
      const wf = await workflow('Mover');
      const unknown = await t.request('PATCH', `/api/v1/workflows/${wf}/move`, {
        body: { data: { type: 'workflow', id: wf, attributes: { folder_id: '0190f2a0-0000-7000-8000-000000000000' } } },
      });
      expect(unknown.status).toBe(422);
      expect(unknown.body.errors[0].source.pointer).toBe('/data/attributes/folder_id');
      const f = await folder('Elsewhere');
      const outsider = await workflow('Outsider');
      const res = await t.request('PATCH', `/api/v1/workflows/${wf}/move`, {
        body: { data: { type: 'workflow', id: wf, attributes: { folder_id: f.id, before_id: outsider } } },
      });
      expect(res.status).toBe(422);
      expect(res.body.errors[0].source.pointer).toBe('/data/attributes/before_id');
    });
  });
});
