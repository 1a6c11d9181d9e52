import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppError } from '../errors/app-error.js';
import { detectDocument, readWorkflowDocument } from './read-document.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../test/fixtures/n8n/${name}`, import.meta.url), 'utf8'));

function refusal(document: unknown): { code: string; pointer: string | undefined; detail: string } {
  try {
    detectDocument(document, '/data/document');
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return {
      code: error.items[0]!.code,
      pointer: (error.items[0]!.source as { pointer?: string } | undefined)?.pointer,
      detail: error.items[0]!.detail,
    };
  }
  throw new Error('expected a refusal');
}

describe('detectDocument', () => {
  it('reads every n8n shape as n8n', () => {
    for (const name of [
      'docs-ai-tutorial-editor-download.json',
      'docs-loop-clipboard.json',
      'n8n-repo-code-node.json',
      'n8n-repo-template-import.json',
      'n8n-repo-template-api.json',
      'n8n-repo-execute-workflow-template.json',
      'public-api-backup-to-github.json',
      'n8n-repo-cli-export-single.json',
      'community-zie619-activecampaign.json',
    ]) {
      expect(detectDocument(fixture(name), '/data/document'), name).toBe('n8n');
    }
    expect(detectDocument([fixture('n8n-repo-cli-export-single.json')], '/data/document')).toBe('n8n');
  });

  it('reads ours and bare graphs as such', () => {
    expect(detectDocument({ format: 'service/v1', graph: { nodes: [], edges: [] } }, '/d')).toBe('service');
    expect(detectDocument({ nodes: [], edges: [] }, '/d')).toBe('graph');
    expect(detectDocument({ nodes: [] }, '/d')).toBe('graph');
    expect(detectDocument({ nodes: [{ id: 'a', type: 'code', config: {} }] }, '/d')).toBe('graph');
    expect(detectDocument({ nodes: [{ name: 'a', type: 'n8n-nodes-base.code', typeVersion: 2, parameters: {} }] }, '/d')).toBe('n8n');
  });

  it('refuses several n8n workflows at once, saying to import one at a time or use folder import', () => {
    const result = refusal(fixture('n8n-repo-cli-export-combined.json'));
    expect(result).toMatchObject({ code: 'unsupported_document', pointer: '/data/document' });
    expect(result.detail).toContain('import them one at a time, or all together with POST /folders/import');
  });

  it('refuses what it cannot tell or does not read, with the formats it accepts', () => {
    const accepted = 'POST /workflows accepts a "service/v1" export';
    expect(refusal('text')).toMatchObject({ code: 'unsupported_document', pointer: '/data/document' });
    expect(refusal({ format: 'service/v9' })).toMatchObject({ pointer: '/data/document/format' });
    expect(refusal({ format: 'service-folder/v1' }).detail).toContain('POST /folders/import');
    expect(refusal({ nodes: [], edges: [], connections: {} }).detail).toContain('cannot be told');
    expect(
      refusal({
        nodes: [
          { id: 'a', type: 'code' },
          { name: 'b', type: 'n8n-nodes-base.noOp', parameters: {} },
        ],
      }).detail,
    ).toContain('cannot be told');
    expect(refusal({ workflow: 'nope' }).detail).toContain(accepted);
    expect(refusal([1, 2]).detail).toContain('not a list of n8n workflows');
  });
});

describe('readWorkflowDocument', () => {
  it('points at malformed n8n nodes and connections and reports all of them', () => {
    const document = {
      nodes: [{ name: 'A', type: 'n8n-nodes-base.noOp', position: 'here' }, { name: 'A', type: 'n8n-nodes-base.noOp' }, { type: 'x.y' }],
      // Connections to no node are dropped and reported (n8n-connections.test.ts), never a problem.
      connections: { A: { main: [[{ node: 'Ghost', type: 'main', index: 0 }, { type: 'main' }], 'B'] }, Nobody: {} },
    };
    try {
      readWorkflowDocument(document, '/data/document');
      throw new Error('expected a refusal');
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).status).toBe(422);
      expect((error as AppError).items.map((i) => [i.code, (i.source as { pointer: string }).pointer])).toEqual([
        ['invalid_import', '/data/document/nodes/0/position'],
        ['invalid_import', '/data/document/nodes/1/name'],
        ['invalid_import', '/data/document/nodes/2/name'],
        ['invalid_import', '/data/document/connections/A/main/0/1'],
        ['invalid_import', '/data/document/connections/A/main/1'],
      ]);
    }
  });

  it('points into a service/v1 document and its references', () => {
    const document = {
      format: 'service/v1',
      name: 5,
      graph: [],
      references: { stores: [{ slug: 'orders', pointers: ['/nodes/0/config/store_id'] }] },
      extra: 1,
    };
    try {
      readWorkflowDocument(document, '/data/document');
      throw new Error('expected a refusal');
    } catch (error) {
      expect((error as AppError).items.map((i) => (i.source as { pointer: string }).pointer)).toEqual([
        '/data/document/extra',
        '/data/document/name',
        '/data/document/graph',
      ]);
    }
    const bad = {
      format: 'service/v1',
      graph: { nodes: [{ id: 'a', type: 'code', config: {} }], edges: [] },
      references: { stores: [{ slug: 'orders', pointers: ['/nodes/0/config/store_id'] }] },
    };
    try {
      readWorkflowDocument(bad, '/data/document');
      throw new Error('expected a refusal');
    } catch (error) {
      expect((error as AppError).items[0]).toMatchObject({
        code: 'invalid_import',
        source: { pointer: '/data/document/references/stores/0/pointers/0' },
      });
    }
  });
});
