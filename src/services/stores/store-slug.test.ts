import { describe, expect, it } from 'vitest';
import { firstFreeSlug, slugFromName, STORE_SLUG } from './store-slug.js';

describe('store slugs', () => {
  it.each([
    ['Orders', 'orders'],
    ['Paid orders (2026)', 'paid-orders-2026'],
    ['  Café Crème  ', 'cafe-creme'],
    ['--Leads__EU--', 'leads-eu'],
    ['😀🎉', 'store'],
    ['x'.repeat(80), 'x'.repeat(64)],
    [`${'a'.repeat(63)} b`, 'a'.repeat(63)],
  ])('derives %j as %j', (name, slug) => {
    expect(slugFromName(name)).toBe(slug);
    expect(slug).toMatch(STORE_SLUG);
  });

  it('takes the first free suffix from -2 on', () => {
    expect(firstFreeSlug('orders', [])).toBe('orders');
    expect(firstFreeSlug('orders', ['orders'])).toBe('orders-2');
    expect(firstFreeSlug('orders', ['orders', 'orders-2', 'orders-4'])).toBe('orders-3');
  });

  it('shortens the base so a suffixed slug stays within 64 characters', () => {
    const base = 'a'.repeat(64);
    const slug = firstFreeSlug(base, [base]);
    expect(slug).toBe(`${'a'.repeat(62)}-2`);
    expect(slug).toMatch(STORE_SLUG);
  });
});
