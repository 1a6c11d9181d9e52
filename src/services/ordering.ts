import { AppError } from '../errors/app-error.js';
import { needsRenumbering, POSITION_STEP, positionBetween } from '../lib/positions.js';

export interface Placement {
  position: number;
  /** Set when the gap ran out: every sibling's new position, the moving item included. */
  renumbered?: { id: string; position: number }[];
}

/**
 * Where an item lands among its new siblings: before `beforeId`, after `afterId`, or at the end.
 * A neighbour that is not a sibling in the target container is a 422 pointing at its field.
 */
export function placeAmong(
  siblings: { id: string; position: number }[],
  movingId: string,
  target: { beforeId?: string | null; afterId?: string | null },
  pointer: (field: 'before_id' | 'after_id') => string,
): Placement {
  const others = siblings.filter((s) => s.id !== movingId);
  let index = others.length;
  if (target.beforeId) {
    const at = others.findIndex((s) => s.id === target.beforeId);
    if (at < 0)
      throw new AppError('validation_failed', 'before_id must name a sibling in the target container', { pointer: pointer('before_id') });
    index = at;
  } else if (target.afterId) {
    const at = others.findIndex((s) => s.id === target.afterId);
    if (at < 0)
      throw new AppError('validation_failed', 'after_id must name a sibling in the target container', { pointer: pointer('after_id') });
    index = at + 1;
  }
  const before = index > 0 ? others[index - 1]!.position : null;
  const after = index < others.length ? others[index]!.position : null;
  if (!needsRenumbering(before, after)) return { position: positionBetween(before, after) };
  const ordered = [...others.slice(0, index).map((s) => s.id), movingId, ...others.slice(index).map((s) => s.id)];
  const renumbered = ordered.map((id, i) => ({ id, position: (i + 1) * POSITION_STEP }));
  return { position: (index + 1) * POSITION_STEP, renumbered };
}
