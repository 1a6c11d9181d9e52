import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (webhook HMAC secrets; connection credentials later), sealed with AES-256-GCM
 * under a key derived from SWITCHYARD_SECRET_KEY. Format: `v1.<iv>.<tag>.<ciphertext>`, each
 * part base64url. GCM authenticates, so a value sealed under another key or altered in the
 * database fails to open instead of yielding garbage.
 */
const VERSION = 'v1';

function keyOf(secretKey: string): Buffer {
  // Domain-separated, so the same key material can derive other keys later.
  return createHash('sha256').update(`switchyard secret-box v1\0${secretKey}`).digest();
}

export function sealSecret(secretKey: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secretKey), iv);
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
}

/** The plaintext, or throws when the value was sealed under another key or altered. */
export function openSecret(secretKey: string, sealed: string): string {
  const [version, iv, tag, data] = sealed.split('.');
  if (version !== VERSION || iv === undefined || tag === undefined || data === undefined) throw new Error('not a sealed secret');
  const decipher = createDecipheriv('aes-256-gcm', keyOf(secretKey), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
}
