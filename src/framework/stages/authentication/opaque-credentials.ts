/**
 * What opaque credentials (API tokens, session ids) share: 32 random bytes
 * behind a prefix naming their kind, kept on the server only as a hash.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The credential in an Authorization header after one of `keywords` (the app's, by default
 * `Bearer`, or `Token` as Django REST Framework's clients send it), matched case-insensitively
 * ('' when the keyword stands alone); undefined for other schemes (Basic, say), which are not ours.
 */
const AUTHORIZATION = /^(\S+)(?: +(\S*))?\s*$/;

export function authorizationCredential(header: string, keywords: readonly string[]): { keyword: string; credential: string } | undefined {
  // A pattern made once: a literal in the body is a new RegExp on every call (every authenticated request).
  const match = AUTHORIZATION.exec(header);
  const keyword = match?.[1]!.toLowerCase();
  return match && keywords.some((accepted) => accepted.toLowerCase() === keyword) ? { keyword: match[1]!, credential: match[2] ?? '' } : undefined;
}

/** `<prefix>` + 43 base64url characters (32 random bytes). */
export const newCredential = (prefix: string): string => prefix + randomBytes(32).toString('base64url');

export const credentialShape = (prefix: string): RegExp => new RegExp(`^${prefix}[A-Za-z0-9_-]{43}$`);

// One-shot hashing: a Hash object per call cost twice the digest itself, on every authenticated request.
export const hashOf = (credential: string): string => hash('sha256', credential, 'hex');

/** Equal strings, compared in time that depends on neither (both are hashed to one length first). */
export const constantTimeEqual = (a: string, b: string): boolean =>
  timingSafeEqual(hash('sha256', a, 'buffer'), hash('sha256', b, 'buffer'));
