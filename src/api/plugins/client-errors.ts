import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError } from 'fastify';
import type { ErrorCode } from '../../errors/error-codes.js';
import { errorDocument, JSONAPI_MEDIA_TYPE } from './error-document.js';

/** After answering, how long a client may keep its side open before the socket is destroyed. */
const CLOSE_GRACE_MS = 5_000;

/** Sockets already answered: Node reports the parser's error again for every chunk that follows. */
const answered = new WeakSet<Socket>();

/** What a connection-level error means to the client: Node's parser errors and timeouts. */
export function describeClientError(error: ConnectionError): { status: number; code: ErrorCode; detail: string } {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: 'request_timeout', detail: 'the request did not arrive in time; the connection is closed' };
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        code: 'headers_too_large',
        detail: 'the request line and headers together are larger than the server accepts (16 KiB by default)',
      };
    default:
      return { status: 400, code: 'bad_request', detail: 'the request is not valid HTTP/1.1' };
  }
}

/** The raw HTTP answer: there is no request object or reply at this level, only the socket. */
export function clientErrorResponse(status: number, code: ErrorCode, detail: string): string {
  const body = JSON.stringify(errorDocument(status, [{ code, detail }]));
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${JSONAPI_MEDIA_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

type HttpSocket = Socket & { _httpMessage?: (ServerResponse & { req?: IncomingMessage }) | null };

/** Writes the answer and ends the socket, then drops what still arrives until the client closes. */
function endWith(socket: Socket, status: number, code: ErrorCode, detail: string): void {
  socket.end(clientErrorResponse(status, code, detail));
  const grace = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
  grace.unref();
  socket.once('close', () => clearTimeout(grace));
  socket.resume();
}

/**
 * Answers once the requests received before the bad bytes are answered: HTTP/1.1 answers in
 * order, so an error written now would take the place of a pipelined request's answer. A
 * request still arriving is the one at fault (a broken chunked body, a timeout): no waiting.
 */
function answerInTurn(socket: HttpSocket, answer: () => void): void {
  const inFlight = socket._httpMessage;
  if (inFlight && inFlight.req?.complete && !inFlight.writableFinished && !socket.destroyed) {
    // After 'finish' Node hands the socket to the next queued answer (or frees it): look again
    // once that is done. 'close' covers an answer that never finishes (its socket went away).
    let next = () => {
      next = () => undefined;
      setImmediate(() => answerInTurn(socket, answer));
    };
    inFlight.once('finish', () => next());
    inFlight.once('close', () => next());
    return;
  }
  answer();
}

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the request (431 head too large,
 * 400 malformed) or it did not arrive in time (408). The answer is a JSON:API error document
 * with `Connection: close`, after the answers of requests received before it, and the socket is
 * ended, not destroyed, so the client reads the answer and sees a clean close rather than a
 * reset. What it still sends is read and dropped until it closes its side, for at most
 * CLOSE_GRACE_MS. A socket that cannot take the answer (already closed, or an answer on it has
 * begun and cannot finish) is destroyed, as Node itself does.
 */
export function answerClientError(error: ConnectionError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
  answered.add(socket);
  const { status, code, detail } = describeClientError(error);
  answerInTurn(socket as HttpSocket, () => {
    if (socket.destroyed) return;
    const inFlight = (socket as HttpSocket)._httpMessage;
    if (!socket.writable || (inFlight?.headersSent && !inFlight.writableFinished)) socket.destroy();
    else endWith(socket, status, code, detail);
  });
}

/**
 * The server's 'connect' listener: this is no proxy, so CONNECT is 400, as nginx answers it
 * (without a listener, Node closes the connection with no answer at all).
 */
export function answerConnect(_request: IncomingMessage, socket: Socket): void {
  if (socket.destroyed || answered.has(socket)) return;
  answered.add(socket);
  endWith(socket, 400, 'bad_request', 'CONNECT is not served: this server is not a proxy');
}
