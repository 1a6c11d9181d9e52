import { escapePointerToken } from '../lib/json-pointer.js';
import { isPlainObject } from '../lib/json.js';

/** `/nodes/3/config` + `url` -> `/nodes/3/config/url`. */
export function pointerJoin(base: string, ...tokens: Array<string | number>): string {
  return tokens.reduce<string>((pointer, token) => `${pointer}/${escapePointerToken(String(token))}`, base);
}

function unescape(token: string): string {
  return token.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** The value at a JSON pointer inside `root`, or undefined. */
export function readPointer(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  let value: unknown = root;
  for (const token of pointer.slice(1).split('/').map(unescape)) {
    if (Array.isArray(value)) value = value[Number(token)];
    else if (isPlainObject(value) && Object.hasOwn(value, token)) value = value[token];
    else return undefined;
  }
  return value;
}

/** Sets the value at a JSON pointer whose parent exists; returns false when it does not. */
export function writePointer(root: unknown, pointer: string, value: unknown): boolean {
  const tokens = pointer.slice(1).split('/').map(unescape);
  const last = tokens.pop();
  const parent = readPointer(root, tokens.length === 0 ? '' : `/${tokens.map(escapePointerToken).join('/')}`);
  if (last === undefined) return false;
  if (Array.isArray(parent)) {
    const index = Number(last);
    if (!Number.isInteger(index) || index < 0 || index >= parent.length) return false;
    parent[index] = value;
    return true;
  }
  if (!isPlainObject(parent)) return false;
  Object.defineProperty(parent, last, { value, enumerable: true, writable: true, configurable: true });
  return true;
}
