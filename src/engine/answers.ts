import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { findExecution, type ExecutionRow } from './execution-store.js';
import { isTerminal } from './statuses.js';

/**
 * An answer for the process holding a synchronous delivery, sent by the process that ran it
 * (cluster/cluster-messages.ts): `r` a respond step's answer, `e` the end, `b` both, committed together (a respond step that was the run's last step: one
 * notification instead of two). Values too large for a notification stay out (`v`/`o` absent):
 * the receiver reads them from the execution row, where the same commit wrote them.
 */
export interface AnswerMessage {
  e: string;
  k: 'r' | 'e' | 'b';
  /** The respond step's answer, JSON text. */
  v?: string;
  /** The end's status. */
  s?: 'completed' | 'failed' | 'cancelled';
  /** The output (completed) or error (failed), JSON text. */
  o?: string;
}

/** How a run ended: the execution finished (with its output or error), or it waits until `runAt` (null: for a child execution). */
export type RunEnd =
  | { status: 'completed'; output: unknown }
  | { status: 'failed'; error: unknown }
  | { status: 'cancelled' }
  /** `deferred`: it waits only for children and its `waiting` status is not written yet (see `commitWait`). */
  | { status: 'waiting'; runAt: string | null; deferred?: boolean };

/** What a waiting HTTP caller learns of an execution, each once it is committed. */
export interface ExecutionObserver {
  responded?: (response: unknown) => void;
  ended?: (end: RunEnd) => void;
}

const parse = (text: string | null | undefined): unknown => (text === null || text === undefined ? null : JSON.parse(text));

/**
 * The HTTP callers of this process waiting for an execution's answer (synchronous webhook
 * deliveries), by execution id. The run tells them directly when it runs here; from another
 * process the answer comes as a notification (cluster.ts), handled in arrival order so a
 * respond step's answer is never overtaken by the end that follows it.
 */
export class Answers {
  private readonly observers = new Map<string, ExecutionObserver>();
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly onError: (error: unknown, executionId: string) => void,
  ) {}

  observe(executionId: string, observer: ExecutionObserver): void {
    this.observers.set(executionId, observer);
  }

  forget(executionId: string): void {
    this.observers.delete(executionId);
  }

  responded(executionId: string, response: unknown): void {
    this.observers.get(executionId)?.responded?.(response);
  }

  ended(executionId: string, end: RunEnd): void {
    const observer = this.observers.get(executionId);
    this.observers.delete(executionId);
    observer?.ended?.(end);
  }

  /** An answer from the process that ran the execution. */
  receive(message: AnswerMessage): void {
    if (!this.observers.has(message.e)) return;
    this.chain = this.chain.then(() => this.deliver(message)).catch((error: unknown) => this.onError(error, message.e));
  }

  /** After notifications may have been missed: tells each waiting caller what the database holds by now. */
  recheck(): void {
    for (const executionId of [...this.observers.keys()]) {
      this.chain = this.chain
        .then(async () => {
          const row = await findExecution(this.db, executionId);
          if (!row) return;
          if (row.response !== null) this.responded(executionId, parse(row.response));
          if (isTerminal(row.status)) this.ended(executionId, endOf(row.status, row.output, row.error));
        })
        .catch((error: unknown) => this.onError(error, executionId));
    }
  }

  private async deliver(message: AnswerMessage): Promise<void> {
    const id = message.e;
    if (!this.observers.has(id)) return;
    // Values left out of the notification (too large for one) are read from the row, once.
    let row: Promise<ExecutionRow | undefined> | undefined;
    const read = () => (row ??= findExecution(this.db, id));
    if (message.k !== 'e') {
      const value = message.v !== undefined ? message.v : ((await read())?.response ?? null);
      this.responded(id, parse(value));
      if (message.k === 'r') return;
    }
    const status = message.s ?? 'failed';
    if (status === 'cancelled') return this.ended(id, { status: 'cancelled' });
    let value = message.o;
    if (value === undefined) {
      const found = await read();
      value = (status === 'completed' ? found?.output : found?.error) ?? undefined;
    }
    this.ended(id, endOf(status, status === 'completed' ? (value ?? null) : null, status === 'failed' ? (value ?? null) : null));
  }
}

function endOf(status: string, output: string | null, error: string | null): RunEnd {
  if (status === 'completed') return { status: 'completed', output: parse(output) };
  if (status === 'cancelled') return { status: 'cancelled' };
  return { status: 'failed', error: parse(error) };
}
