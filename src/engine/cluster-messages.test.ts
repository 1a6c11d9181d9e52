import { describe, expect, it } from 'vitest';
import { MAX_NOTIFY_PAYLOAD } from '../db/notifier.js';
import { answerPayload, parseAnswer } from './cluster-messages.js';

describe('answer messages', () => {
  it('carry the value when it fits in a notification, and only the id and kind when it does not', () => {
    const small = { e: 'ex-1', k: 'r' as const, v: '{"ok":true}' };
    expect(parseAnswer(answerPayload(small))).toEqual(small);
    const end = { e: 'ex-2', k: 'e' as const, s: 'completed' as const, o: JSON.stringify({ pad: 'x'.repeat(MAX_NOTIFY_PAYLOAD) }) };
    const payload = answerPayload(end);
    expect(Buffer.byteLength(payload)).toBeLessThanOrEqual(MAX_NOTIFY_PAYLOAD);
    expect(parseAnswer(payload)).toEqual({ e: 'ex-2', k: 'e', s: 'completed' });
  });

  it('reads nothing from a payload that is not an answer', () => {
    expect(parseAnswer('not json')).toBeNull();
    expect(parseAnswer('null')).toBeNull();
    expect(parseAnswer('{"k":"r"}')).toBeNull();
  });
});
