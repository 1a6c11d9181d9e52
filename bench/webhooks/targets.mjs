// A webhook endpoint under test: the workflow created, its graph pushed (the PUT /graph answer
// names the endpoint and mints the bearer token) and activated; then one delivery checks the
// answer before any load, so a load never measures a stream of refusals.
/* global fetch */
import { DELIVERY_BODY, TRIGGER } from '../lib/webhook-graphs.mjs';

/**
 * Returns `{workflowId, origin, path, url, headers, body, expect}`. `expect` is `{status, body}`
 * or `{status, check}`: an immediate answer names its execution, so only its shape is checked.
 */
export async function webhookTarget(session, name, graph, expect) {
  const { api } = session;
  const since = (await session.state()).now;
  const workflowId = await api.createWorkflow(name);
  const saved = await api.putGraph(workflowId, graph);
  await api.activate(workflowId);
  const node = saved.graph.nodes.find((n) => n.id === TRIGGER);
  const token = saved.webhook_tokens?.[TRIGGER];
  if (!node?.config.webhook_id || !token)
    throw new Error(`PUT /graph did not answer a webhook_id and a token for ${TRIGGER}: ${JSON.stringify(saved).slice(0, 400)}`);
  const url = new URL(`/webhooks/${node.config.webhook_id}`, api.baseUrl);
  const target = {
    workflowId,
    origin: url.origin,
    path: url.pathname,
    url: url.href,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: DELIVERY_BODY,
    expect,
  };

  const answer = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body });
  const text = await answer.text();
  if (answer.status !== expect.status || (expect.body !== undefined && text !== expect.body) || (expect.check && !expect.check(text))) {
    throw new Error(
      `${name}: the first delivery answered ${answer.status} ${text.slice(0, 300)}, expected ${expect.status} ${expect.body ?? ''}`,
    );
  }
  // The same delivery without the token must be refused: verification really runs.
  const refused = await fetch(target.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: target.body });
  await refused.text();
  if (refused.status !== 401) throw new Error(`${name}: a delivery without the bearer token answered ${refused.status}, expected 401`);
  await session.waitForBacklog(workflowId, since);
  return target;
}
