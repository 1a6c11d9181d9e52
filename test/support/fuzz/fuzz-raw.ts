import net from 'node:net';
import fc from 'fast-check';
import { parseResponses } from '../raw-http.js';
import type { FuzzResponse } from './fuzz-seed.js';

/**
 * Requests no HTTP client library would send, written straight to a socket: heads over the
 * 16 KiB limit, malformed request lines and headers, contradictory framing, broken chunked
 * bodies, raw bytes in the path. Each is answered (a JSON:API error document for a 4xx) and the
 * connection closed without a reset.
 */
export interface RawCase {
  name: string;
  bytes: Buffer;
}

export interface RawOutcome {
  responses: FuzzResponse[];
  /** The socket failed (ECONNRESET and the like), or nothing was answered in time. */
  unclean: string | null;
}

const head = (lines: string[]) => `${lines.join('\r\n')}\r\n\r\n`;

export function rawCaseArbitrary(token: string): fc.Arbitrary<RawCase> {
  const auth = `Authorization: Bearer ${token}`;
  const size = fc.integer({ min: 16_400, max: 64_000 });
  const cases: fc.Arbitrary<RawCase>[] = [
    size.map((n) => ({
      name: 'header over 16 KiB',
      bytes: Buffer.from(head(['GET /api/v1/me HTTP/1.1', 'Host: fuzz', auth, `X-Pad: ${'p'.repeat(n)}`])),
    })),
    size.map((n) => ({
      name: 'URL over 16 KiB',
      bytes: Buffer.from(head([`GET /api/v1/workflows?sort=${'s'.repeat(n)} HTTP/1.1`, 'Host: fuzz', auth])),
    })),
    fc.integer({ min: 200, max: 2000 }).map((n) => ({
      name: 'many headers',
      bytes: Buffer.from(
        head(['GET /healthz HTTP/1.1', 'Host: fuzz', ...Array.from({ length: n }, (_, i) => `X-H${i}: v`), 'Connection: close']),
      ),
    })),
    fc
      .uint8Array({ minLength: 1, maxLength: 300 })
      .map((bytes) => ({ name: 'random bytes', bytes: Buffer.concat([Buffer.from(bytes), Buffer.from('\r\n\r\n')]) })),
    fc
      .constantFrom(
        'GET /healthz HTTP/9.9',
        'GET /healthz HTTP/1.1 extra',
        'GET  /healthz HTTP/1.1',
        'BREW /healthz HTTP/1.1',
        'get /healthz HTTP/1.1',
        'GET /healthz',
        'GET /he\u0000althz HTTP/1.1',
        'GET /api/v1/workflows/\u00ff\u00fe HTTP/1.1',
        'GET http://fuzz/api/v1/me HTTP/1.1',
        'GET * HTTP/1.1',
        'OPTIONS * HTTP/1.1',
        'CONNECT fuzz:443 HTTP/1.1',
        'GET /api/v1/workflows/../me HTTP/1.1',
        'GET /api/v1/workflows/%00 HTTP/1.1',
        'GET // HTTP/1.1',
        '\tGET /healthz HTTP/1.1',
      )
      .map((line) => ({
        name: `request line ${JSON.stringify(line).slice(0, 40)}`,
        bytes: Buffer.from(head([line, 'Host: fuzz', auth, 'Connection: close']), 'latin1'),
      })),
    fc
      .constantFrom(
        ['Bad Header: x'],
        ['X-Nul: a\u0000b'],
        ['X-Fold: a', ' folded'],
        [': empty-name'],
        ['Content-Length: 5', 'Content-Length: 6'],
        ['Content-Length: -1'],
        ['Content-Length: 1e3'],
        ['Content-Length: 4', 'Transfer-Encoding: chunked'],
        ['Transfer-Encoding: gzip, chunked'],
        ['Transfer-Encoding: chunked, identity'],
        ['Host: a', 'Host: b'],
      )
      .map((lines) => ({
        name: `headers ${JSON.stringify(lines).slice(0, 40)}`,
        bytes: Buffer.from(
          `${head(['POST /api/v1/workflows HTTP/1.1', 'Host: fuzz', auth, 'Content-Type: application/vnd.api+json', ...lines])}{"a"}`,
          'latin1',
        ),
      })),
    fc
      .constantFrom(
        'zz\r\n{}\r\n0\r\n\r\n',
        '5\r\n{"dat\r\nzz\r\n',
        '3;x=\u0001\r\nabc\r\n0\r\n\r\n',
        '2\r\n{}\r\n0\r\nX-Trailer: \u0000\r\n\r\n',
      )
      .map((chunks) => ({
        name: 'broken chunked body',
        bytes: Buffer.from(
          head([
            'POST /api/v1/workflows HTTP/1.1',
            'Host: fuzz',
            auth,
            'Content-Type: application/vnd.api+json',
            'Transfer-Encoding: chunked',
          ]) + chunks,
          'latin1',
        ),
      })),
    fc.constant({ name: 'HTTP/1.0', bytes: Buffer.from(head(['GET /api/v1/me HTTP/1.0', auth])) }),
    fc.constant({
      name: 'pipelined then garbage',
      bytes: Buffer.from(head(['GET /healthz HTTP/1.1', 'Host: fuzz']) + head(['GET /readyz HTTP/1.1', 'Host: fuzz']) + 'NOT HTTP\r\n\r\n'),
    }),
  ];
  return fc.oneof(...cases);
}

/** Sends a case and reads until the server closes (at most `timeoutMs`), then closes too. */
export function sendRaw(port: number, bytes: Buffer, timeoutMs = 15_000): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    let unclean: string | null = null;
    const socket = net.connect(port, '127.0.0.1');
    const timer = setTimeout(() => {
      unclean = 'no close within the time limit';
      socket.destroy();
    }, timeoutMs);
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('end', () => socket.end());
    socket.on('error', (error: NodeJS.ErrnoException) => {
      unclean ??= error.code ?? error.message;
    });
    socket.on('close', () => {
      clearTimeout(timer);
      let responses: FuzzResponse[] = [];
      try {
        responses = parseResponses(Buffer.concat(received)).map((r) => ({ status: r.status, headers: r.headers, body: r.body }));
      } catch (error) {
        unclean ??= `unparsable answer: ${(error as Error).message}`;
      }
      resolve({ responses, unclean });
    });
    socket.on('connect', () => socket.write(bytes));
  });
}
