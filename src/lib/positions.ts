/**
 * Sparse positions order siblings (folders, workflows in a folder) so that moving one item
 * writes one row. New items go 1024 past the last; a move takes the midpoint of its new
 * neighbours. Doubles halve ~50 times before the gap is too small, so `needsRenumbering` asks
 * for a renumbering of the siblings (1024 apart again) when it gets below 1e-6.
 */
export const POSITION_STEP = 1024;
const MIN_GAP = 1e-6;

export function positionBetween(before: number | null, after: number | null): number {
  if (before === null && after === null) return POSITION_STEP;
  if (before === null) return after! - POSITION_STEP;
  if (after === null) return before + POSITION_STEP;
  return (before + after) / 2;
}

export function needsRenumbering(before: number | null, after: number | null): boolean {
  return before !== null && after !== null && after - before < MIN_GAP;
}
