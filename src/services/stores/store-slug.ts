/** Lower-case letters, digits and dashes, 1 to 64 characters, no dash at either end. */
export const STORE_SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const MAX_SLUG = 64;

/**
 * The slug a name suggests: accents dropped (é -> e), anything else that is not a letter or
 * digit turned into single dashes, at most 64 characters. A name with nothing usable (emoji
 * only, say) gives `store`.
 */
export function slugFromName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, MAX_SLUG)
    .replace(/^-+|-+$/g, '');
  return slug === '' ? 'store' : slug;
}

/**
 * The first of `base`, `base-2`, `base-3`, … that is not taken; the base is shortened when a
 * suffix would pass 64 characters.
 */
export function firstFreeSlug(base: string, taken: readonly string[]): string {
  const used = new Set(taken);
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = `${base.slice(0, MAX_SLUG - suffix.length).replace(/-+$/, '')}${suffix}`;
    if (!used.has(candidate)) return candidate;
  }
}
