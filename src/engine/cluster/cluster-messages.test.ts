import { describe, expect, it } from 'vitest';
import { MAX_NOTIFY_PAYLOAD } from '../../db/notifier.js';
import { answerPayload, parseProcessMessage } from './cluster-messages.js';

/** An answer read from a payload; null for one that is not an answer. */
const parseAnswer = (payload: string) => parseProcessMessage(payload)?.answer ?? null;

describe('answer messages', () => {
  it('carry the value when it fits in a notification, and only the id and kind when it does not', () => {
    const small = { e: 'ex-1', k: 'r' as const, v: '{"ok":true}' };
    expect(parseAnswer(answerPayload(small))).toEqual(small);
    const end = { e: 'ex-2', k: 'e' as const, s: 'completed' as const, o: JSON.stringify({ pad: 'x'.repeat(MAX_NOTIFY_PAYLOAD) }) };
    const payload = answerPayload(end);
    expect(Buffer.byteLength(payload)).toBeLessThanOrEqual(MAX_NOTIFY_PAYLOAD);
    expect(parseAnswer(payload)).toEqual({ e: 'ex-2', k: 'e', s: 'completed' });
    // Both at once (a respond step that ended the run): either value too large leaves both out.
    const both = {
      e: 'ex-3',
      k: 'b' as const,
      v: '{"ok":true}',
      s: 'completed' as const,
      o: JSON.stringify({ pad: 'x'.repeat(MAX_NOTIFY_PAYLOAD) }),
    };
    expect(parseAnswer(answerPayload(both))).toEqual({ e: 'ex-3', k: 'b', s: 'completed' });
    expect(parseAnswer(answerPayload({ ...both, o: '{"ok":true}' }))).toEqual({ ...both, o: '{"ok":true}' });
  });

  it('reads nothing from a payload that is not an answer', () => {
    expect(parseAnswer('not json')).toBeNull();
    expect(parseAnswer('null')).toBeNull();
    expect(parseAnswer('{"k":"r"}')).toBeNull();
  });

  it('tells an answer from executions handed to the process, whose rows or ids it reads', () => {
    const row = { id: 'ex-3', status: 'pending' };
    const lease = '2026-11-28T10:00:05.000000Z';
    const now = '2026-11-28T10:00:00.000000Z';
    expect(parseProcessMessage(JSON.stringify({ c: [{ row, steps: [] }], k: 'h', l: lease, n: now }))).toEqual({
      handed: { c: [{ row, steps: [] }], l: lease, n: now },
    });
    expect(parseProcessMessage('{"i": ["ex-4", "ex-5"], "k": "h"}')).toEqual({ handed: { i: ['ex-4', 'ex-5'] } });
    expect(parseProcessMessage('{"e":"ex-1","k":"r"}')).toEqual({ answer: { e: 'ex-1', k: 'r' } });
    // A hand-off is never taken for an answer, nor a malformed one for anything.
    expect(parseAnswer('{"c": [], "k": "h"}')).toBeNull();
    expect(parseProcessMessage('{"i": [1], "k": "h"}')).toBeNull();
    expect(parseProcessMessage('{"k": "h"}')).toBeNull();
    // Rows without the lease and time they were handed with cannot be made running.
    expect(parseProcessMessage(JSON.stringify({ c: [{ row, steps: [] }], k: 'h', l: lease }))).toBeNull();
    expect(parseProcessMessage(JSON.stringify({ c: [{ row, steps: [] }], k: 'h', n: now }))).toBeNull();
    expect(parseProcessMessage('[1]')).toBeNull();
  });
});
