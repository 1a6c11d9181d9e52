import { asciiLowercase } from './raw-headers.js';
import { BEARER_HEADER, verifyBearer } from './verify-bearer.js';
import { GITHUB_LEGACY_SIGNATURE_HEADER, GITHUB_SIGNATURE_HEADER, verifyGithub, verifyPlain } from './verify-hmac.js';
import { STRIPE_SIGNATURE_HEADER, verifyStripe } from './verify-stripe.js';
import { rejected, VERIFIED, type Verification, type VerifyResult } from './verification.js';

export { HMAC_FORMATS, type HmacFormat, type Verification, type VerifyResult } from './verification.js';
export { STRIPE_TOLERANCE_SECONDS } from './verify-stripe.js';

/**
 * Whether a delivery satisfies its webhook's verification. rawHeaders: Node's
 * `IncomingMessage.rawHeaders` (alternating name, value; names in any case). body: the exact raw
 * bytes, never a re-serialised parse. nowMs: the injected clock's reading (Stripe's tolerance).
 * Never throws on anything a caller can send; a failure carries a reason for the server log,
 * which must not reach the caller.
 */
export function verifyDelivery(verification: Verification, rawHeaders: string[], body: Buffer, nowMs: number): VerifyResult {
  try {
    return dispatch(verification, rawHeaders, body, nowMs);
  } catch {
    // Nothing a caller sends reaches a throw (every check returns its failure). This catches a
    // stored verification of the wrong shape, or a future bug, and fails closed.
    return rejected('verification threw');
  }
}

function dispatch(verification: Verification, rawHeaders: string[], body: Buffer, nowMs: number): VerifyResult {
  switch (verification.method) {
    case 'none':
      return VERIFIED;
    case 'bearer':
      return verifyBearer(verification.tokenHash, rawHeaders);
    case 'hmac':
      switch (verification.format) {
        case 'github':
          return verifyGithub(verification.secret, rawHeaders, body);
        case 'stripe':
          return verifyStripe(verification.secret, rawHeaders, body, nowMs);
        case 'plain':
          return verifyPlain(verification.secret, verification.header, rawHeaders, body);
        default:
          return unknownVerification(verification.format);
      }
    default:
      return unknownVerification(verification);
  }
}

/** Verification is stored config; an unknown kind (a newer writer, a bad row) fails closed. */
function unknownVerification(_: never): VerifyResult {
  return rejected('unknown verification method or format');
}

/**
 * Lowercase names of the headers that carry this verification's credentials, to strip from the
 * payload a workflow sees. GitHub's legacy `x-hub-signature` (HMAC-SHA1 with the same secret)
 * is included though never checked: it is a signature all the same.
 */
export function credentialHeaders(verification: Verification): string[] {
  switch (verification.method) {
    case 'none':
      return [];
    case 'bearer':
      return [BEARER_HEADER];
    case 'hmac':
      switch (verification.format) {
        case 'github':
          return [GITHUB_SIGNATURE_HEADER, GITHUB_LEGACY_SIGNATURE_HEADER];
        case 'stripe':
          return [STRIPE_SIGNATURE_HEADER];
        case 'plain':
          return verification.header ? [asciiLowercase(verification.header)] : [];
        default:
          return [];
      }
    default:
      return [];
  }
}
