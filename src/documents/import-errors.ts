import { AppError, type ErrorItem } from '../errors/app-error.js';

/** Collects what is wrong with a document, each with a pointer into the request body. */
export class DocumentProblems {
  readonly items: ErrorItem[] = [];

  add(pointer: string, detail: string): void {
    this.items.push({ code: 'invalid_import', detail, source: { pointer } });
  }

  throwIfAny(): void {
    if (this.items.length > 0) throw AppError.many('invalid_import', this.items);
  }
}

/** The document is of no format this service reads, or of one it reads elsewhere. */
export function unsupportedDocument(pointer: string, detail: string): AppError {
  return new AppError('unsupported_document', `${detail} ${ACCEPTED_FORMATS}`, { pointer });
}

export const ACCEPTED_FORMATS =
  'POST /workflows accepts a "service/v1" export, one n8n workflow (an editor download, a clipboard copy, a template, a public-API object or n8n export:workflow output) or a bare {nodes, edges} graph; POST /folders/import accepts a "service-folder/v1" document or an n8n export:workflow array.';
