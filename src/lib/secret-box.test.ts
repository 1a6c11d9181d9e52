import { describe, expect, it } from 'vitest';
import { openSecret, sealSecret } from './secret-box.js';

const KEY = 'k'.repeat(40);

describe('secret box', () => {
  it('opens what it sealed, with a fresh nonce each time', () => {
    const a = sealSecret(KEY, 'whsec_abc');
    const b = sealSecret(KEY, 'whsec_abc');
    expect(a).not.toBe(b);
    expect(a).not.toContain('whsec_abc');
    expect(openSecret(KEY, a)).toBe('whsec_abc');
  });

  it('refuses a value sealed under another key, altered, or not sealed at all', () => {
    const sealed = sealSecret(KEY, 'secret');
    expect(() => openSecret('x'.repeat(40), sealed)).toThrow();
    const parts = sealed.split('.');
    parts[3] = Buffer.from('other!').toString('base64url');
    expect(() => openSecret(KEY, parts.join('.'))).toThrow();
    expect(() => openSecret(KEY, 'plaintext')).toThrow('not a sealed secret');
  });
});
