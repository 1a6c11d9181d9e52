import { MAX_NOTIFY_PAYLOAD } from '../db/notifier.js';

/** The notification channels and messages of the processes of a cluster (cluster.ts). */

/**
 * New runnable work (an execution created or made due). The payload: empty (every worker looks),
 * a due time (every worker sets its timer), or a turn (`~` and a token: one worker looks; see
 * `WorkerTurns`).
 */
export const WORK_CHANNEL = 'sy_work';
/** Workers announce themselves: `+<process id>` when they start claiming and every heartbeat, `-<process id>` when they stop. */
export const WORKERS_CHANNEL = 'sy_workers';
/** An execution was cancelled; the payload is its id. */
export const CANCEL_CHANNEL = 'sy_cancel';

/** The channel of one process's waiting HTTP callers (answers of respond steps, ends). */
export function answerChannel(processId: string): string {
  return `sy_answer_${processId.replace(/-/g, '')}`;
}

/**
 * An answer for the process holding a synchronous delivery: `r` a respond step's answer, `e`
 * the end. Values too large for a notification stay out (`v`/`o` absent): the receiver reads
 * them from the execution row, where the same commit wrote them.
 */
export interface AnswerMessage {
  e: string;
  k: 'r' | 'e';
  /** The respond step's answer, JSON text. */
  v?: string;
  /** The end's status. */
  s?: 'completed' | 'failed' | 'cancelled';
  /** The output (completed) or error (failed), JSON text. */
  o?: string;
}

/** An answer as a notification's payload: without its values when they would not fit (the receiver reads them from the row). */
export function answerPayload(message: AnswerMessage): string {
  const payload = JSON.stringify(message);
  if (Buffer.byteLength(payload) <= MAX_NOTIFY_PAYLOAD) return payload;
  const { v: _v, o: _o, ...bare } = message;
  return JSON.stringify(bare);
}

/** An answer read from a payload; null for one that is not an answer. */
export function parseAnswer(payload: string): AnswerMessage | null {
  try {
    const message = JSON.parse(payload) as AnswerMessage | null;
    return typeof message?.e === 'string' ? message : null;
  } catch {
    return null;
  }
}
