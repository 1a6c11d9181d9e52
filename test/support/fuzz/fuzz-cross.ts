import fc from 'fast-check';
import { idKindOf, type Operation } from './openapi-operations.js';
import { JSONAPI, type FuzzRequest, type FuzzResponse } from './fuzz-seed.js';
import { idsOf, type FuzzContext } from './fuzz-requests.js';
import type { Finding } from './fuzz-checks.js';

/**
 * Cross-workspace pairs: a well-formed request of the fuzzing workspace's tokens naming the other
 * workspace's ids (in the path, or in the body where a body names resources), and its twin naming
 * fresh unknown ids instead. The two must answer alike, and a foreign id in the path must answer
 * 404 `not_found`: another workspace's resources are indistinguishable from ones that never were.
 */
export interface CrossPair {
  request: FuzzRequest;
  twin: FuzzRequest;
  /** Foreign id -> the unknown id standing in for it in the twin. */
  swaps: [string, string][];
  /** A foreign id is in the path, so the answer must be 404 not_found. */
  expectNotFound: boolean;
}

/** Bodies that are valid apart from the ids they name, per operation. */
function bodyOf(operation: Operation, pathId: string | undefined, folder: string): unknown {
  if (operation.path.endsWith('/graph')) return { data: { graph: { nodes: [], edges: [] }, layout: false } };
  if (operation.path.endsWith('/run')) return { data: { draft: true } };
  if (operation.path.endsWith('/move')) return { data: { type: 'workflow', id: pathId, attributes: { folder_id: folder } } };
  if (operation.path.endsWith('/reorder')) return { data: { type: 'workflow-folder', id: pathId, attributes: { before_id: folder } } };
  if (!operation.resourceType || operation.bodyType === null) return undefined;
  // An action's body names nothing: its foreign id goes into the path.
  if (operation.method === 'POST' && !operation.bodyNamesResources) return { data: {} };
  if (operation.method === 'POST')
    return {
      data: {
        type: operation.resourceType,
        attributes: { name: 'cross' },
        relationships: { [operation.resourceType === 'workflow' ? 'folder' : 'parent']: { data: { type: 'workflow-folder', id: folder } } },
      },
    };
  return { data: { type: operation.resourceType, id: pathId, attributes: { name: 'cross' } } };
}

export function crossPairArbitrary(ctx: FuzzContext): fc.Arbitrary<CrossPair> {
  const candidates = ctx.operations.filter(
    (op) =>
      op.path.startsWith('/api/v1/') &&
      (op.pathParams.some((p) => idKindOf(op, p) !== 'webhook' && idKindOf(op, p) !== 'other') ||
        (op.bodyType !== null && op.resourceType !== null)),
  );
  return fc
    .tuple(fc.constantFrom(...candidates), fc.boolean(), fc.boolean(), fc.uuid({ version: 7 }), fc.uuid({ version: 7 }), fc.nat(10))
    .map(([operation, inPath, readToken, unknownA, unknownB, pick]) => {
      const swaps: [string, string][] = [];
      const foreignOf = (kind: 'workflow' | 'folder' | 'execution', unknown: string) => {
        const ids = idsOf(ctx.foreign, kind);
        const id = ids[pick % ids.length]!;
        swaps.push([id, unknown]);
        return id;
      };
      // Only creates, moves and reorders name other resources in their bodies; elsewhere the
      // foreign id goes into the path.
      const bodyNamesIds =
        operation.bodyType !== null &&
        (operation.path.endsWith('/move') ||
          operation.path.endsWith('/reorder') ||
          (operation.method === 'POST' && operation.resourceType !== null && operation.bodyNamesResources));
      let path = operation.path;
      let pathId: string | undefined;
      let foreignInPath = false;
      for (const param of operation.pathParams) {
        const kind = idKindOf(operation, param);
        let value: string;
        if (kind === 'workflow' || kind === 'folder' || kind === 'execution') {
          const useForeign = inPath || !bodyNamesIds;
          value = useForeign ? foreignOf(kind, param === 'id' ? unknownA : unknownB) : idsOf(ctx.reserved, kind)[0]!;
          foreignInPath ||= useForeign;
        } else {
          value = 'hook';
        }
        if (param === 'id') pathId = value;
        path = path.replace(`{${param}}`, value);
      }
      const folder = foreignInPath ? idsOf(ctx.reserved, 'folder')[0]! : foreignOf('folder', unknownB);
      const body = bodyOf(operation, pathId, folder);
      const token = readToken && operation.method === 'GET' ? ctx.tokens.read : ctx.tokens.build;
      const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: JSONAPI, 'x-request-id': 'fuzz-cross' };
      if (body !== undefined) headers['content-type'] = JSONAPI;
      const request: FuzzRequest = {
        method: operation.method,
        url: path,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      };
      const swap = (text: string) => swaps.reduce((out, [foreign, unknown]) => out.split(foreign).join(unknown), text);
      const twin: FuzzRequest = {
        ...request,
        url: swap(request.url),
        ...(request.body !== undefined ? { body: swap(request.body as string) } : {}),
      };
      return { request, twin, swaps, expectNotFound: foreignInPath };
    });
}

/** Findings for a pair's two answers. */
export function checkCrossPair(pair: CrossPair, answer: FuzzResponse, twinAnswer: FuzzResponse): Finding[] {
  const findings: Finding[] = [];
  const swap = (text: string) => pair.swaps.reduce((out, [foreign, unknown]) => out.split(foreign).join(unknown), text);
  if (pair.expectNotFound) {
    let code: unknown;
    try {
      code = JSON.parse(answer.body).errors?.[0]?.code;
    } catch {
      code = undefined;
    }
    if (answer.status !== 404 || code !== 'not_found')
      findings.push({
        kind: 'cross_workspace',
        detail: `a foreign id in the path answered ${answer.status} ${String(code)}, not 404 not_found`,
      });
  }
  if (answer.status !== twinAnswer.status || swap(answer.body) !== twinAnswer.body) {
    findings.push({
      kind: 'cross_workspace',
      detail: `foreign ids answered ${answer.status} ${answer.body.slice(0, 160)}; unknown ids answered ${twinAnswer.status} ${twinAnswer.body.slice(0, 160)}`,
    });
  }
  return findings;
}
