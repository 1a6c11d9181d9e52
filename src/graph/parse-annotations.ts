import { isPlainObject } from '../lib/json.js';
import type { GraphAnnotation, GraphViolation } from './graph-types.js';
import { escapePointerToken } from '../lib/json-pointer.js';

/** Far above what a canvas shows; bounds the text a graph can carry beside its nodes. */
export const ANNOTATION_LIMITS = Object.freeze({ maxAnnotations: 500, maxTextLength: 20_000 });
const ID_PATTERN = /^[A-Za-z0-9_-]{1,100}$/;
const FIELDS = ['id', 'text', 'position', 'name', 'size', 'color'];

/**
 * Checks a graph's optional `annotations`: canvas notes that are not steps (imported n8n sticky
 * notes land here). Undefined stays undefined.
 */
export function parseAnnotations(raw: unknown, pointer: string): { value: GraphAnnotation[] | undefined; violations: GraphViolation[] } {
  if (raw === undefined) return { value: undefined, violations: [] };
  const violations: GraphViolation[] = [];
  const problem = (at: string, detail: string) => violations.push({ pointer: `${pointer}${at}`, code: 'invalid_annotation', detail });
  if (!Array.isArray(raw)) {
    problem('', 'annotations must be an array.');
    return { value: undefined, violations };
  }
  if (raw.length > ANNOTATION_LIMITS.maxAnnotations) {
    problem('', `A graph may have at most ${ANNOTATION_LIMITS.maxAnnotations} annotations; this one has ${raw.length}.`);
    return { value: undefined, violations };
  }
  const seen = new Map<string, number>();
  const value: GraphAnnotation[] = [];
  raw.forEach((entry: unknown, index) => {
    const at = `/${index}`;
    const before = violations.length;
    if (!isPlainObject(entry)) {
      problem(at, 'An annotation must be an object {id, text, position}.');
      return;
    }
    if (typeof entry.id !== 'string' || !ID_PATTERN.test(entry.id))
      problem(`${at}/id`, 'Annotation id must be 1 to 100 letters, digits, "_" or "-".');
    else if (seen.has(entry.id)) problem(`${at}/id`, `Annotation id "${entry.id}" is already used by ${pointer}/${seen.get(entry.id)}.`);
    else seen.set(entry.id, index);
    if (typeof entry.text !== 'string' || entry.text.length > ANNOTATION_LIMITS.maxTextLength) {
      problem(`${at}/text`, `Annotation text must be a string of at most ${ANNOTATION_LIMITS.maxTextLength} characters.`);
    }
    if (!isPoint(entry.position, 'x', 'y')) problem(`${at}/position`, 'Annotation position must be {x, y} with finite numbers.');
    if (entry.size !== undefined && !isPoint(entry.size, 'width', 'height'))
      problem(`${at}/size`, 'Annotation size must be {width, height} with finite numbers.');
    if (entry.name !== undefined && (typeof entry.name !== 'string' || entry.name.length > 200))
      problem(`${at}/name`, 'Annotation name must be a string of at most 200 characters.');
    if (
      entry.color !== undefined &&
      typeof entry.color !== 'string' &&
      !(typeof entry.color === 'number' && Number.isFinite(entry.color))
    ) {
      problem(`${at}/color`, 'Annotation color must be a string or a number.');
    }
    for (const key of Object.keys(entry)) {
      if (!FIELDS.includes(key))
        problem(`${at}/${escapePointerToken(key)}`, `Annotation property "${key}" is not allowed; annotations take ${FIELDS.join(', ')}.`);
    }
    if (violations.length !== before) return;
    const annotation: GraphAnnotation = {
      id: entry.id as string,
      text: entry.text as string,
      position: pick(entry.position, 'x', 'y') as GraphAnnotation['position'],
    };
    if (entry.name !== undefined) annotation.name = entry.name as string;
    if (entry.size !== undefined) annotation.size = pick(entry.size, 'width', 'height') as GraphAnnotation['size'] & object;
    if (entry.color !== undefined) annotation.color = entry.color as string | number;
    value.push(annotation);
  });
  return { value: violations.length > 0 ? undefined : value, violations };
}

function isPoint(value: unknown, a: string, b: string): boolean {
  return (
    isPlainObject(value) &&
    Object.keys(value).every((key) => key === a || key === b) &&
    [a, b].every((key) => typeof value[key] === 'number' && Number.isFinite(value[key]))
  );
}

function pick(value: unknown, a: string, b: string): Record<string, number> {
  const source = value as Record<string, number>;
  return { [a]: source[a]!, [b]: source[b]! };
}
