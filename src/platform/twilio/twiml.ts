/** Escapes text for XML character data and attribute values; characters XML 1.0 forbids are dropped. */
export function escapeXml(text: string): string {
  return text
    .replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!)
    .replace(/[^\t\n\r\u0020-\uFFFD\u{10000}-\u{10FFFF}]/gu, '');
}

export const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>';

/** TwiML that sends one reply message, or none. */
export function messageTwiml(text: string | null): string {
  if (text === null || text === '') return EMPTY_TWIML;
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Message>${escapeXml(text)}</Message></Response>`;
}

/**
 * The reply text of a respond step's answer (`{status, headers, body}`): a string body, or a
 * body object's `text` or `message`. Anything else sends no reply.
 */
export function replyTextOf(response: unknown): string | null {
  const body = typeof response === 'object' && response !== null ? (response as { body?: unknown }).body : undefined;
  if (typeof body === 'string') return body;
  if (typeof body === 'object' && body !== null) {
    const { text, message } = body as { text?: unknown; message?: unknown };
    if (typeof text === 'string') return text;
    if (typeof message === 'string') return message;
  }
  return null;
}
