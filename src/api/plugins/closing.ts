import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors/app-error.js';

/**
 * 503 `service_unavailable` for requests that still arrive while the server shuts down (on a
 * keep-alive connection, after `close()` began): the document replaces Fastify's own 503 body
 * (`return503OnClosing` is off in protocol-options.ts), and Fastify adds `Connection: close`.
 * Requests already in flight finish normally.
 */
export function registerClosingAnswer(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // Callback style and no allocation on the open path: it runs before every request.
  app.addHook('onRequest', (_request, _reply, done) => {
    if (closing) done(new AppError('service_unavailable', 'the server is shutting down; retry on another connection'));
    else done();
  });
}
