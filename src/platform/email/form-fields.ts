import busboy from 'busboy';
import { AppError } from '../../errors/app-error.js';

/** A file part of a multipart body, held in memory (the endpoint's body cap bounds it). */
export interface FormFile {
  field: string;
  filename: string | null;
  contentType: string;
  content: Buffer;
}

export interface FormFields {
  fields: Map<string, string>;
  files: FormFile[];
}

/** Parts a form may hold: Mailgun's fields number a few dozen, plus one per attachment. */
const MAX_PARTS = 1_000;

/**
 * The fields of a form-encoded or multipart body (Mailgun posts either). Multipart is parsed by
 * busboy, the parser behind @fastify/multipart, over the bytes already read and capped by the
 * platform route; a repeated field keeps its first value. Anything else is 400.
 */
export async function parseFormFields(contentType: string, body: Buffer): Promise<FormFields> {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') {
    const fields = new Map<string, string>();
    for (const [name, value] of new URLSearchParams(body.toString('utf8'))) if (!fields.has(name)) fields.set(name, value);
    return { fields, files: [] };
  }
  if (type !== 'multipart/form-data')
    throw new AppError('invalid_body', 'the body must be application/x-www-form-urlencoded or multipart/form-data', {
      header: 'Content-Type',
    });
  return new Promise((resolve, reject) => {
    const fields = new Map<string, string>();
    const files: FormFile[] = [];
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        limits: { parts: MAX_PARTS, fieldSize: body.length, fileSize: body.length },
        defParamCharset: 'utf8',
      });
    } catch (error) {
      reject(new AppError('invalid_body', `the multipart body cannot be read: ${(error as Error).message}`, { header: 'Content-Type' }));
      return;
    }
    parser.on('field', (name, value) => {
      if (!fields.has(name)) fields.set(name, value);
    });
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () =>
        files.push({
          field,
          filename: info.filename ?? null,
          contentType: info.mimeType || 'application/octet-stream',
          content: Buffer.concat(chunks),
        }),
      );
    });
    parser.on('partsLimit', () => reject(new AppError('invalid_body', `a multipart body holds at most ${MAX_PARTS} parts`)));
    parser.on('error', (error: Error) => reject(new AppError('invalid_body', `the multipart body cannot be read: ${error.message}`)));
    parser.on('close', () => resolve({ fields, files }));
    parser.end(body);
  });
}
