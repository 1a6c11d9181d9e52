import { describe, expect, it } from 'vitest';
import { runRespondToWebhook } from './run-respond-to-webhook.js';
import { stepContext } from '../../../test/support/step-context.js';

const outputFor = async (config: Record<string, unknown>) =>
  (await runRespondToWebhook(stepContext({ nodeId: 'reply', config, input: { order: 7 } }))).output;

describe('runRespondToWebhook', () => {
  it('answers 200 with no headers and no body when the config leaves them out', async () => {
    expect(await outputFor({})).toEqual({ status: 200, headers: {}, body: null });
  });

  it('passes the given status, headers and body on as they are', async () => {
    const config = { status: 201, headers: { 'x-order': 'A-7' }, body: { accepted: 'A-7' } };
    expect(await outputFor(config)).toEqual(config);
  });

  it('keeps a body that is a falsy value other than null', async () => {
    for (const body of ['', 0, false]) expect(await outputFor({ body })).toEqual({ status: 200, headers: {}, body });
  });

  it('labels its metrics as a respond step', async () => {
    expect((await runRespondToWebhook(stepContext({ config: {} }))).metrics).toEqual({ kind: 'respond_to_webhook' });
  });
});
