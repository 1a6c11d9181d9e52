import type { StepRuntime } from '../step-runtime.js';

/**
 * The engine has already evaluated the expressions in `status`, `headers` and `body`; the output
 * is the answer, which the engine records on the execution and hands to the waiting delivery
 * (webhooks/webhook-answers.ts sends it). Defaults stand in for what the config leaves out.
 */
export const runRespondToWebhook: StepRuntime = async (context) => ({
  output: { status: context.config.status ?? 200, headers: context.config.headers ?? {}, body: context.config.body ?? null },
  metrics: { kind: 'respond_to_webhook' },
});
