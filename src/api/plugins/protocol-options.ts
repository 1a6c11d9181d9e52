import type { FastifyHttpOptions } from 'fastify';
import type { Server } from 'node:http';
import { answerClientError } from './client-errors.js';
import { frameworkErrorHandler, type OwnAnswers } from './framework-errors.js';
import { HTTP_LIMITS, type HttpLimits } from './http-limits.js';

/**
 * The server options that make every answer raised outside our handlers a JSON:API error
 * document: router limits (`frameworkErrors`), parser-level errors and timeouts
 * (`clientErrorHandler`), and shutdown (503 comes from closing.ts, so Fastify's own is off).
 */
export function protocolOptions(
  limits: Partial<HttpLimits> = {},
  ownAnswers: OwnAnswers = {},
): Pick<FastifyHttpOptions<Server>, 'http' | 'requestTimeout' | 'clientErrorHandler' | 'frameworkErrors' | 'return503OnClosing'> {
  const chosen = { ...HTTP_LIMITS, ...limits };
  return {
    http: {
      maxHeaderSize: chosen.maxHeaderBytes,
      headersTimeout: chosen.headersTimeoutMs,
      requestTimeout: chosen.requestTimeoutMs,
      connectionsCheckingInterval: chosen.checkIntervalMs,
    },
    requestTimeout: chosen.requestTimeoutMs,
    clientErrorHandler: answerClientError,
    frameworkErrors: frameworkErrorHandler(ownAnswers),
    return503OnClosing: false,
  };
}
