import { NonRetriableError } from '../step-errors.js';
import type { StepRuntime } from '../../steps/step-runtime.js';
import { runCode } from '../../steps/code/run-code.js';
import { runHttp } from '../../steps/http/run-http.js';
import { runSet } from '../../steps/set/run-set.js';
import { runIf } from '../../steps/if/run-if.js';
import { runSwitch } from '../../steps/switch/run-switch.js';
import { runSaveToStore } from '../../steps/save-to-store/run-save-to-store.js';
import { runReadStore } from '../../steps/read-store/run-read-store.js';
import { runAgent } from '../../steps/agent/run-agent.js';
import { runChatReply } from '../../steps/chat-reply/run-chat-reply.js';
import { runRespondToWebhook } from '../../steps/respond-to-webhook/run-respond-to-webhook.js';

/** A trigger in the middle of a run passes its input on (a trigger's own output is the payload). */
const passThrough: StepRuntime = async (context) => ({ output: context.input });

const RUNTIMES: Record<string, StepRuntime> = {
  webhook: passThrough,
  schedule: passThrough,
  app_event: passThrough,
  chat_reply: runChatReply,
  sms: passThrough,
  email: passThrough,
  code: runCode,
  http: runHttp,
  set: runSet,
  if: runIf,
  switch: runSwitch,
  respond_to_webhook: runRespondToWebhook,
  save_to_store: runSaveToStore,
  read_store: runReadStore,
  agent: runAgent,
};
// `wait`, `loop` and `call_workflow` are run by the engine itself (execution-run.ts).

export function runtimeFor(slug: string): StepRuntime {
  const runtime = RUNTIMES[slug];
  if (!runtime) throw new NonRetriableError(`no runtime for step type "${slug}"`, { code: 'not_available' });
  return runtime;
}
