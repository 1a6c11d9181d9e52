import { describe, expect, it } from 'vitest';
import { openingMessages, parseJsonAnswer } from './agent-prompt.js';

describe('agent prompt', () => {
  it('puts the summary and recalled messages in the system text and the window before the prompt', () => {
    const opening = openingMessages(
      'Be brief.',
      {
        summary: 'Ada asked about backups.',
        recalled: [{ role: 'user', content: 'I use Postgres.' }],
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'system', content: 'ignored' },
          { role: 'assistant', content: 'Hello' },
        ],
      },
      'And now?',
    );
    expect(opening.system).toBe(
      'Be brief.\n\nSummary of the earlier conversation:\nAda asked about backups.\n\nEarlier messages of this conversation that may be relevant:\n- user: I use Postgres.',
    );
    expect(opening.messages).toEqual([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
      { role: 'user', content: 'And now?' },
    ]);
    expect(openingMessages(undefined, null, 'Hi')).toEqual({ system: undefined, messages: [{ role: 'user', content: 'Hi' }] });
  });

  it('reads a JSON answer whole or from one fenced block', () => {
    expect(parseJsonAnswer(' {"a": 1} ')).toEqual({ value: { a: 1 } });
    expect(parseJsonAnswer('```json\n{"a": 2}\n```')).toEqual({ value: { a: 2 } });
    expect(parseJsonAnswer('Here: {"a": 3}')).toEqual({ error: 'the answer is not valid JSON' });
  });
});
