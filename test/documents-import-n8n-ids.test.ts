import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { importOk, n8nFixture } from './support/document-helpers.js';

/** n8n imports whose `connections` name nodes by id (community collections), and references to no node. */
describeEachDialect('n8n imports: connections by node id', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  describe('connections keyed by node id, as community collections write them', () => {
    // Ids unlike the names, so a reference read the wrong way names nothing.
    const nodes = [
      { id: 'c0ffee-start', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} },
      { id: 'c0ffee-route', name: 'Route', type: 'n8n-nodes-base.acmeRouter', typeVersion: 1, parameters: {} },
      { id: 'c0ffee-yes', name: 'Yes', type: 'n8n-nodes-base.noOp', typeVersion: 1, parameters: {} },
      { id: 'c0ffee-no', name: 'No', type: 'n8n-nodes-base.noOp', typeVersion: 1, parameters: {} },
    ];
    /** A workflow whose main connections are `{key: [[target, …] per output]}`, each key and target written as given. */
    const routed = (connections: Record<string, string[][]>, withNodes: Array<Record<string, unknown>> = nodes) => ({
      name: 'Routed',
      nodes: withNodes,
      connections: Object.fromEntries(
        Object.entries(connections).map(([key, outputs]) => [
          key,
          { main: outputs.map((ts) => ts.map((node) => ({ node, type: 'main', index: 0 }))) },
        ]),
      ),
    });
    const edgesOf = (graph: { edges: Array<Record<string, string>> }) =>
      graph.edges.map((e) => `${e.source}.${e.source_port}->${e.target}`);
    const byName = ['start.out->route', 'route.out->yes', 'route.output_1->no'];

    it('imports a workflow keyed by node id with the same edges as keyed by name', async () => {
      const named = await importOk(t, routed({ Start: [['Route']], Route: [['Yes'], ['No']] }));
      expect(edgesOf(named.graph)).toEqual(byName);
      const ids = await importOk(t, routed({ 'c0ffee-start': [['c0ffee-route']], 'c0ffee-route': [['c0ffee-yes'], ['c0ffee-no']] }));
      expect(ids.graph).toEqual(named.graph);
      expect(ids.meta.requirements.bindings).toEqual([]);
      // A published one: keys and targets by id (Zie619/n8n-workflows, before the collection rewrote them).
      const meme = await importOk(t, n8nFixture('community-zie619-meme-by-id.json'));
      expect(edgesOf(meme.graph)).toEqual([
        'daily_schedule.out->generate',
        'generate.out->create_meme',
        'create_meme.out->ig_create',
        'ig_create.out->ig_publish',
      ]);
    });

    it('reads a mix: some keys by name, others by id, one node keyed both ways with its targets merged', async () => {
      const mixed = await importOk(t, routed({ 'c0ffee-start': [['Route']], Route: [['Yes'], ['c0ffee-no']] }));
      expect(edgesOf(mixed.graph)).toEqual(byName);
      const twice = await importOk(t, routed({ Start: [['Route']], Route: [['Yes']], 'c0ffee-route': [['Yes'], ['No']] }));
      expect(edgesOf(twice.graph)).toEqual(byName);
      expect(twice.graph.nodes[1].config.outputs).toBe(2);
    });

    it('resolves a target named by id', async () => {
      const { graph } = await importOk(t, routed({ Start: [['c0ffee-route']], Route: [['c0ffee-yes'], ['c0ffee-no']] }));
      expect(edgesOf(graph)).toEqual(byName);
    });

    it('drops a key and a target that name no node, lists them under requirements.bindings and imports the rest', async () => {
      const { graph, meta } = await importOk(t, routed({ Start: [['Route']], Route: [['Yes'], ['Ghost']], 'c0ffee-gone': [['No']] }));
      expect(graph.nodes.map((n) => n.id)).toEqual(['start', 'route', 'yes', 'no']);
      expect(edgesOf(graph)).toEqual(['start.out->route', 'route.out->yes']);
      expect(meta.requirements.bindings).toEqual([
        {
          pointer: '/nodes/1',
          detail:
            'the n8n connection from "Route" (main output 1) to "Ghost" was dropped: its target names no node of the workflow, by name or by id',
          resource: 'node',
          n8n_node: 'Ghost',
          document_pointer: '/data/document/connections/Route/main/1/0/node',
        },
        {
          pointer: '/edges',
          detail: 'the n8n connections keyed "c0ffee-gone" were dropped: the key names no node of the workflow, by name or by id',
          resource: 'node',
          n8n_node: 'c0ffee-gone',
          document_pointer: '/data/document/connections/c0ffee-gone',
        },
      ]);
      // As published: keyed by id, every target an error handler the collection never added.
      const pinger = await importOk(t, n8nFixture('community-zie619-url-pinger.json'));
      expect(pinger.graph.nodes.map((n) => n.id)).toEqual(['split_out', 'schedule_trigger', 'http_request', 'urls_list']);
      expect(pinger.graph.edges).toEqual([]);
      expect(
        pinger.meta.requirements.bindings.map((b: { pointer: string; document_pointer: string }) => [b.pointer, b.document_pointer]),
      ).toEqual(
        [0, 1, 2, 3, 4].map((o) => ['/nodes/2', `/data/document/connections/584a4340-7053-4afd-ae3e-f0c1f2de2586/main/${o}/0/node`]),
      );
    });

    it("resolves a name that is also another node's id by name first", async () => {
      // "Notify" is one node's name and the other's id; read by id first, both edges would end at "Lookup".
      const clash = [nodes[0]!, { ...nodes[2]!, id: 'Notify', name: 'Lookup' }, { ...nodes[3]!, id: 'c0ffee-notify', name: 'Notify' }];
      const { graph } = await importOk(t, routed({ 'c0ffee-start': [['Notify']], Notify: [['Lookup']] }, clash));
      expect(edgesOf(graph)).toEqual(['start.out->notify', 'notify.out->lookup']);
    });
  });
});
