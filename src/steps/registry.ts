import type { StepDefinition } from './define-step.js';
import { agentStep } from './agent/index.js';
import { appEventStep } from './app-event/index.js';
import { approvalStep } from './approval/index.js';
import { callWorkflowStep } from './call-workflow/index.js';
import { chatReplyStep } from './chat-reply/index.js';
import { codeStep } from './code/index.js';
import { emailStep } from './email/index.js';
import { httpStep } from './http/index.js';
import { ifStep } from './if/index.js';
import { loopStep } from './loop/index.js';
import { placeholderStep } from './placeholder/index.js';
import { readStoreStep } from './read-store/index.js';
import { respondToWebhookStep } from './respond-to-webhook/index.js';
import { saveToStoreStep } from './save-to-store/index.js';
import { scheduleStep } from './schedule/index.js';
import { setStep } from './set/index.js';
import { smsStep } from './sms/index.js';
import { switchStep } from './switch/index.js';
import { waitStep } from './wait/index.js';
import { webhookStep } from './webhook/index.js';

/** Every step type, ordered by `sortOrder` (the catalog's order). Add a new step here. */
export const stepDefinitions: readonly StepDefinition[] = Object.freeze(
  [
    webhookStep,
    appEventStep,
    chatReplyStep,
    httpStep,
    agentStep,
    codeStep,
    callWorkflowStep,
    respondToWebhookStep,
    saveToStoreStep,
    readStoreStep,
    setStep,
    ifStep,
    switchStep,
    loopStep,
    waitStep,
    approvalStep,
    scheduleStep,
    smsStep,
    emailStep,
    placeholderStep,
  ].sort((a, b) => a.sortOrder - b.sortOrder),
);

const bySlug = new Map(stepDefinitions.map((def) => [def.slug, def]));

export function findStepDefinition(slug: string): StepDefinition | undefined {
  return bySlug.get(slug);
}
