import { pipeline, type Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { TextDecoder } from 'node:util';

/** 10 MiB: a response is held in memory and stored as the step's output, so it must stay small. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

type RawHeaders = Record<string, string | string[] | undefined>;

/** Lower-cased names; repeated headers joined with ", " (RFC 9110 5.3), except Set-Cookie, which cannot be joined and is always an array. */
export function responseHeaders(raw: RawHeaders): Record<string, string | string[]> {
  const entries: [string, string | string[]][] = [];
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    if (key === 'set-cookie') entries.push([key, Array.isArray(value) ? value : [value]]);
    else entries.push([key, Array.isArray(value) ? value.join(', ') : value]);
  }
  // A hostile server may send a header named `__proto__`: fromEntries keeps it a plain key
  // (assignment would try to set the object's prototype and drop the header).
  return Object.fromEntries(entries);
}

export function headerValue(raw: RawHeaders, name: string): string | undefined {
  const value = raw[name];
  return Array.isArray(value) ? value[0] : value;
}

const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * Reads a body until its end or until it passes `limit` bytes after decompression (so a small
 * compressed bomb is caught too); past the limit the stream is destroyed, which stops the
 * download instead of draining it. An encoding we cannot decode is passed through as bytes.
 */
export async function readBody(
  stream: Readable,
  contentEncoding: string | undefined,
  limit: number,
): Promise<{ bytes: Buffer; exceeded: boolean }> {
  const makeDecoder = contentEncoding ? DECODERS[contentEncoding.trim().toLowerCase()] : undefined;
  // pipeline forwards errors and destroys the source when the decoder is destroyed.
  const source: Readable = makeDecoder ? pipeline(stream, makeDecoder(), () => {}) : stream;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of source as AsyncIterable<Buffer | string>) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    chunks.push(buffer);
    size += buffer.length;
    if (size > limit) {
      source.destroy();
      stream.destroy();
      return { bytes: Buffer.concat(chunks).subarray(0, limit), exceeded: true };
    }
  }
  return { bytes: Buffer.concat(chunks), exceeded: false };
}

interface MediaType {
  essence: string;
  charset: string | undefined;
}

function parseMediaType(contentType: string | undefined): MediaType | null {
  if (!contentType) return null;
  const [essence = '', ...params] = contentType.split(';');
  const charset = params.map((param) => /^\s*charset\s*=\s*"?([^";\s]+)"?\s*$/i.exec(param)?.[1]).find((value) => value !== undefined);
  return { essence: essence.trim().toLowerCase(), charset };
}

function isJson(essence: string): boolean {
  return essence === 'application/json' || essence === 'text/json' || /^application\/[\w.+-]+\+json$/.test(essence);
}

/** Media types users read as text. `+xml` (Atom, RSS, SOAP) and JavaScript join the brief's list because they are text by definition. */
function isText(essence: string): boolean {
  return (
    essence.startsWith('text/') ||
    essence === 'application/xml' ||
    /^application\/[\w.+-]+\+xml$/.test(essence) ||
    essence === 'application/x-www-form-urlencoded' ||
    essence === 'application/javascript'
  );
}

/** `cut`: the bytes may end inside a character (an excerpt); drop that partial character. */
function decodeText(bytes: Buffer, charset: string | undefined, cut = false): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset ?? 'utf-8');
  } catch {
    // An unknown charset label: UTF-8 is the best guess on today's web.
    decoder = new TextDecoder('utf-8');
  }
  return decoder.decode(bytes, { stream: cut });
}

/**
 * The output `body`: JSON parsed (or its text when it does not parse), text as a string,
 * anything else as `{base64, content_type}` so binary survives the JSON step record. An empty
 * body (204, HEAD) is null whatever its type claims.
 */
export function parseBody(bytes: Buffer, contentType: string | undefined): unknown {
  if (bytes.length === 0) return null;
  const media = parseMediaType(contentType);
  if (media && isJson(media.essence)) {
    const text = decodeText(bytes, media.charset);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  if (media && isText(media.essence)) return decodeText(bytes, media.charset);
  return { base64: bytes.toString('base64'), content_type: contentType ?? null };
}

/** A short, printable piece of an error response for the step record. */
export function bodyExcerpt(bytes: Buffer, contentType: string | undefined, maxBytes: number): string {
  const media = parseMediaType(contentType);
  const slice = bytes.subarray(0, maxBytes);
  if (media && (isJson(media.essence) || isText(media.essence))) return decodeText(slice, media.charset, true);
  // Undeclared or binary: show it as UTF-8 when it is, else say what it is instead of printing bytes.
  const text = decodeText(slice, 'utf-8', true);
  return text.includes('\uFFFD') ? `(${bytes.length} bytes of ${contentType ?? 'unknown type'})` : text;
}

/**
 * Retry-After in milliseconds from now (RFC 9110 10.2.3: delay-seconds or an HTTP date), or null
 * when absent or unreadable. A date in the past means "now".
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return null;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}
