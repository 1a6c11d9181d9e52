import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The secret key encrypts secrets at rest. When SWITCHYARD_SECRET_KEY is unset it is generated
 * once into the data dir (mode 0600) and read back on every later start; losing it makes stored
 * secrets unreadable, so it is never regenerated over an existing file.
 */
export function loadOrCreateSecretKey(dataDir: string, configured: string | null): string {
  if (configured) return configured;
  const file = path.join(dataDir, 'secret.key');
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return existing;
    throw new Error(`${file} holds no usable key (fewer than 32 characters); restore it or remove it to lose encrypted secrets`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = randomBytes(32).toString('base64url');
  fs.writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}
