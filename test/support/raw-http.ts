import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RawExchange {
  responses: RawResponse[];
  /** The server ended its side (FIN) after answering. */
  ended: boolean;
  /** The socket failed (ECONNRESET and the like): what a clean close must never show. */
  error: string | null;
}

/** Splits what arrived on a connection into its HTTP/1.1 responses (bodies framed by Content-Length). */
export function parseResponses(raw: Buffer): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = raw;
  while (rest.length > 0) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd === -1) throw new Error(`incomplete response head: ${rest.toString('latin1').slice(0, 200)}`);
    const [statusLine = '', ...lines] = rest.subarray(0, headEnd).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const bodyStart = headEnd + 4;
    responses.push({
      status: Number(statusLine.split(' ')[1]),
      headers,
      body: rest.subarray(bodyStart, bodyStart + length).toString('utf8'),
    });
    rest = rest.subarray(bodyStart + length);
  }
  return responses;
}

/**
 * Opens a TCP connection, writes `chunks` in turn (each after the previous one was flushed),
 * optionally runs `during` with the socket, reads until the server closes, then closes its own
 * side. Resolves with what was answered and how the connection ended.
 */
export function rawExchange(
  port: number,
  chunks: (string | Buffer)[],
  during?: (socket: net.Socket) => Promise<void>,
): Promise<RawExchange> {
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    let ended = false;
    let error: string | null = null;
    const socket = net.connect(port, '127.0.0.1');
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('end', () => {
      ended = true;
      socket.end();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message;
    });
    socket.on('close', () => resolve({ responses: parseResponses(Buffer.concat(received)), ended, error }));
    socket.on('connect', async () => {
      for (const chunk of chunks) await new Promise<void>((done) => socket.write(chunk, () => done()));
      if (during) await during(socket);
    });
  });
}
