import { MAX_NOTIFY_PAYLOAD } from '../../db/notifier.js';
import type { HandedOff } from './hand-off.js';
import type { AnswerMessage } from '../answers.js';

export type { AnswerMessage } from '../answers.js';

/** The notification channels and messages of the processes of a cluster (cluster.ts). */

/**
 * New runnable work (an execution created or made due). The payload: empty (every worker looks),
 * a due time (every worker sets its timer), or a turn (`~` and a token: one worker looks; see
 * `WorkerTurns`).
 */
export const WORK_CHANNEL = 'sy_work';
/**
 * Workers announce themselves: `+<process id>;<capacity>` when they start claiming and every
 * heartbeat, `-<process id>` when they stop. `?<process id>`: a process that just started asks
 * every worker to announce itself now (an API process learning whom it can hand work to).
 */
export const WORKERS_CHANNEL = 'sy_workers';
/** An execution was cancelled; the payload is its id. */
export const CANCEL_CHANNEL = 'sy_cancel';

/** The channel of one process: answers for its waiting HTTP callers (respond steps, ends) and, for a worker, the executions handed to it (hand-off.ts). */
export function answerChannel(processId: string): string {
  return `sy_answer_${processId.replace(/-/g, '')}`;
}

/** The name (`application_name`) of a worker's listening connection, and the key of the presence lock it holds, which `sy_admit_handing_off` (migration 0022) asks about. */
export function workerConnectionName(processId: string): string {
  return `sy_worker_${processId.replace(/-/g, '')}`;
}

/** An answer as a notification's payload: without its values when they would not fit (the receiver reads them from the row). */
export function answerPayload(message: AnswerMessage): string {
  const payload = JSON.stringify(message);
  if (Buffer.byteLength(payload) <= MAX_NOTIFY_PAYLOAD) return payload;
  const { v: _v, o: _o, ...bare } = message;
  return JSON.stringify(bare);
}

/** A message on a process's own channel: an answer, or executions handed to it (`{"k": "h", ...}`, written by `sy_admit_handing_off`, migration 0023); null for neither. */
export function parseProcessMessage(
  payload: string,
): { answer: AnswerMessage; handed?: undefined } | { handed: HandedOff; answer?: undefined } | null {
  let message: { e?: unknown; k?: unknown; c?: unknown; i?: unknown; l?: unknown; n?: unknown } | null;
  try {
    message = JSON.parse(payload) as typeof message;
  } catch {
    return null;
  }
  if (message === null || typeof message !== 'object') return null;
  if (message.k === 'h') {
    if (Array.isArray(message.c) && typeof message.l === 'string' && typeof message.n === 'string')
      return { handed: { c: message.c as Extract<HandedOff, { c: unknown }>['c'], l: message.l, n: message.n } };
    if (Array.isArray(message.i) && message.i.every((id) => typeof id === 'string')) return { handed: { i: message.i as string[] } };
    return null;
  }
  return typeof message.e === 'string' ? { answer: message as AnswerMessage } : null;
}
