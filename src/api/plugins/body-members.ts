import type { FastifyInstance, preValidationHookHandler, RouteOptions } from 'fastify';
import { AppError } from '../../errors/app-error.js';
import { isPlainObject } from '../../lib/json.js';
import { escapePointerToken } from '../../lib/json-pointer.js';
import { DOCUMENT_FORM } from '../jsonapi/resource-schemas.js';

type Schema = Record<string, unknown>;

/**
 * A JSON body's top level is what its route's document form names, as the OpenAPI document
 * says (openapi-exact.ts closes every object that names its members): anything else is 400
 * `invalid_document` with a pointer, before the handler runs. The run-time schemas check only
 * what the services do not (so that the services answer 422 with their own pointers), and left
 * the top level open: `{"data":{…},"extra":1}` was taken, and a JSON `null` or array where an
 * object is declared was read as an empty action, answers the document calls impossible (the
 * fuzz run found both). Members inside `data` stay the services' to check. A route that declares
 * no body (a DELETE, a GET) refuses one rather than ignoring it.
 */
export function registerBodyMemberCheck(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = route.schema as { body?: Schema; hide?: boolean } | undefined;
    // A route left out of the document exists to refuse something else (an empty row key).
    if (schema?.hide) return;
    const declared = schema?.body;
    if (declared === undefined) {
      // GET and HEAD bodies are never parsed: only the other methods pay for this check.
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (methods.every((method) => method === 'GET' || method === 'HEAD')) return;
      addPreValidation(route, (body) =>
        body === undefined ? null : new AppError('invalid_document', 'this operation takes no request body', { pointer: '' }),
      );
      return;
    }
    const form = topLevelForm(declared);
    if (form === null) return;
    const { members, required, objectData } = form;
    addPreValidation(route, (body) => {
      if (body === undefined) return null;
      if (!isPlainObject(body)) return new AppError('invalid_document', 'the body must be a JSON object', { pointer: '' });
      // A missing required member (`data`) is the first thing to say: the route's own check says it.
      if (required.some((name) => !Object.hasOwn(body, name))) return null;
      for (const key of Object.keys(body)) {
        if (!members.has(key))
          return new AppError('invalid_document', `unknown member "${key}"`, { pointer: `/${escapePointerToken(key)}` });
      }
      // An action that reads nothing from `data` still takes only an object there, as declared.
      if (objectData && body.data !== undefined && !isPlainObject(body.data))
        return new AppError('invalid_document', 'the "data" member must be an object', { pointer: '/data' });
      return null;
    });
  });
}

/** Adds a check of the parsed body to the route's preValidation hooks, callback style (no promise a request). */
function addPreValidation(route: RouteOptions, refusal: (body: unknown) => AppError | null): void {
  const hook: preValidationHookHandler = (request, _reply, done) => {
    const error = refusal(request.body);
    if (error) done(error);
    else done();
  };
  const existing = route.preValidation;
  route.preValidation = existing === undefined ? [hook] : [...(Array.isArray(existing) ? existing : [existing]), hook];
}

/** The members a body's top level may hold and must hold, or null when its form is not a closed JSON object. */
function topLevelForm(body: Schema | undefined): { members: Set<string>; required: string[]; objectData: boolean } | null {
  if (body === undefined) return null;
  const form = (body[DOCUMENT_FORM] as Schema | undefined) ?? body;
  const alternatives = (form.oneOf ?? form.anyOf) as Schema[] | undefined;
  const objects = alternatives ?? [form];
  const members = new Set<string>();
  const required = alternatives === undefined && Array.isArray(form.required) ? (form.required as string[]) : [];
  for (const object of objects) {
    if (object.type !== 'object' || !isPlainObject(object.properties)) return null;
    if (object.additionalProperties !== undefined && object.additionalProperties !== false) return null;
    if (object.patternProperties !== undefined) return null;
    for (const key of Object.keys(object.properties)) members.add(key);
  }
  // `data` declared an object in every form (an action's, a run's): anything else is refused here.
  const objectData = objects.every((object) => (object.properties as Record<string, Schema>).data?.type === 'object');
  return { members, required, objectData };
}
