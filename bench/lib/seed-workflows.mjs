// Fills a workspace with workflows in the row shape the service writes: UUID v7 ids, canonical
// microsecond timestamps, sparse positions, and graphs normalised and laid out by the same
// code `PUT /workflows/:id/graph` runs. One transaction, 500-row INSERTs (15 columns each, far
// below SQLite's 32,766 bound parameters).
import { performance } from 'node:perf_hooks';
import { v7 as uuidv7 } from 'uuid';
import { formatMicros } from '../../dist/lib/clock.js';
import { POSITION_STEP } from '../../dist/lib/positions.js';
import { validateGraph } from '../../dist/graph/validate-graph.js';
import { layoutGraph } from '../../dist/graph/layout-graph.js';

const CHUNK = 500;
const YEAR_MS = 365 * 86_400_000;
const SERVICES = ['Stripe', 'GitHub', 'Shopify', 'Slack', 'Twilio', 'HubSpot', 'Zendesk', 'Postmark', 'Notion', 'Linear'];
const JOBS = [
  'order sync',
  'new signup alert',
  'invoice reminder',
  'lead enrichment',
  'incident page',
  'nightly export',
  'refund triage',
  'PR digest',
  'SMS follow-up',
  'ticket router',
];
/** Node counts and how often each occurs: most workflows are small, a few are big. */
const GRAPH_SIZES = [3, 3, 3, 3, 6, 6, 6, 12, 12, 24];

/** A webhook trigger, a chain of HTTP and code steps, and a respond step, as stored. */
function storedGraph(size) {
  const nodes = [{ id: 'trigger', type: 'webhook', name: 'Incoming event', config: { response_mode: 'respond_step' } }];
  for (let i = 1; i < size - 1; i++) {
    nodes.push(
      i % 2 === 1
        ? {
            id: `fetch_${i}`,
            type: 'http',
            name: `Fetch ${i}`,
            config: {
              method: 'POST',
              url: 'https://api.example.com/v1/items/{{ trigger.body.id }}',
              headers: { 'x-team': 'ops' },
              body: { id: '{{ trigger.body.id }}', step: i },
            },
          }
        : {
            id: `shape_${i}`,
            type: 'code',
            name: `Shape ${i}`,
            config: { code: `return { ...input.body, step: ${i}, total: (input.body.items ?? []).length };` },
          },
    );
  }
  nodes.push({ id: 'reply', type: 'respond_to_webhook', name: 'Reply', config: { status: 200, body: '{{ input }}' } });
  const edges = nodes.slice(1).map((node, i) => ({ source: nodes[i].id, target: node.id }));
  const result = validateGraph({ nodes, edges });
  if (!result.ok) throw new Error(`seed graph of ${size} nodes is invalid: ${JSON.stringify(result.violations)}`);
  return JSON.stringify(layoutGraph(result.graph));
}

function workflowRow(i, count, workspace, graphs, nowMs) {
  // Spread over the past year, oldest first, so the newest page is the last rows inserted.
  const createdMs = nowMs - YEAR_MS + Math.floor((i * YEAR_MS) / count);
  const created = formatMicros(createdMs * 1000 + (i % 1000));
  const guided = i % 5 === 0;
  return {
    id: uuidv7({ msecs: createdMs }),
    workspace_id: workspace.id,
    user_id: workspace.owner_user_id,
    folder_id: null,
    position: (i + 1) * POSITION_STEP,
    name: `${SERVICES[i % SERVICES.length]} ${JOBS[Math.floor(i / SERVICES.length) % JOBS.length]}${i % 7 === 0 ? ' (copy)' : ''}`,
    description: i % 3 === 0 ? null : 'Runs on every delivery; owned by the operations team.',
    status: 'inactive',
    ai_auto_probe: i % 4 === 0,
    build_mode: guided ? 'guided' : 'advanced',
    build_prompt: guided ? 'When an order is paid, look up the customer and post a summary to #sales.' : null,
    graph: graphs.get(GRAPH_SIZES[i % GRAPH_SIZES.length]),
    active_snapshot_id: null,
    export_key: uuidv7({ msecs: createdMs }),
    created_at: created,
    updated_at: formatMicros(createdMs * 1000 + 3_600_000_000),
  };
}

/**
 * Inserts `count` workflows into the workspace with slug `slug`; one in four is active with its
 * snapshot, as after `POST /workflows/:id/activate`. Returns how many and how long it took.
 */
export async function seedWorkflows(deps, slug, count) {
  const started = performance.now();
  const workspace = await deps.db.selectFrom('workspaces').selectAll().where('slug', '=', slug).executeTakeFirstOrThrow();
  const graphs = new Map([...new Set(GRAPH_SIZES)].map((size) => [size, storedGraph(size)]));
  const nowMs = Date.now();
  const rows = [];
  const snapshots = [];
  for (let i = 0; i < count; i++) {
    const row = workflowRow(i, count, workspace, graphs, nowMs);
    if (i % 4 === 1) {
      const snapshot = {
        id: uuidv7({ msecs: nowMs }),
        workspace_id: workspace.id,
        workflow_id: row.id,
        graph: row.graph,
        created_by: row.user_id,
        created_at: row.updated_at,
      };
      Object.assign(row, { status: 'active', active_snapshot_id: snapshot.id });
      snapshots.push(snapshot);
    }
    rows.push(row);
  }
  await deps.db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += CHUNK)
      await trx
        .insertInto('workflows')
        .values(rows.slice(i, i + CHUNK))
        .execute();
    for (let i = 0; i < snapshots.length; i += CHUNK)
      await trx
        .insertInto('workflow_snapshots')
        .values(snapshots.slice(i, i + CHUNK))
        .execute();
  });
  return { count, ms: Math.round(performance.now() - started) };
}
