/**
 * The slug a store gets from a name (the rule of services/stores/store-slug.ts, repeated so the
 * document mappers stay free of service imports): accents dropped, other runs of non
 * letters/digits as one dash, at most 64 characters.
 */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 64)
    .replace(/^-+|-+$/g, '');
  return slug === '' ? 'store' : slug;
}
