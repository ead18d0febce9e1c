/**
 * Conditional requests (RFC 9110 §13): a strong ETag per record, a weak one
 * per list page; If-None-Match answers 304 to reads, If-Match guards writes
 * with 412. A browsable page's ETag also says whose page it is.
 */
import { hash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../base/errors.js';

/** A strong validator of a representation's JSON text. */
export function strongEtag(json: string): string {
  return `"${hash('sha256', json, 'base64url').slice(0, 27)}"`;
}

export const weakEtag = (json: string): string => `W/${strongEtag(json)}`;

function tags(header: string): string[] {
  return header.split(',').map((tag) => tag.trim()).filter(Boolean);
}

const opaque = (tag: string): string => (tag.startsWith('W/') ? tag.slice(2) : tag);

/**
 * A browsable page's ETag: the data's mixed with what else the page shows, the media type and
 * its viewer (user, or anonymous, and the session's CSRF token, which the page carries), so a
 * browser that logs in or out revalidates into the other page, never a 304 of the old one.
 * The JSON's ETag stays the data's alone: that is the one If-Match compares.
 */
export function pageEtag(dataEtag: string, request: FastifyRequest): string {
  const { user, csrfToken } = request;
  const viewer = user ? `user ${user.id} ${user.username} ${csrfToken ?? ''}` : 'anonymous';
  return weakEtag(`text/html\n${viewer}\n${dataEtag}`);
}

/** If-None-Match (weak comparison) on a read: whether the client's copy is current, so 304 applies. */
export function notModified(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (!header || (request.method !== 'GET' && request.method !== 'HEAD')) return false;
  return tags(header).some((tag) => tag === '*' || opaque(tag) === opaque(etag));
}

const preconditionFailed = (): ApiError =>
  new ApiError(412, 'precondition_failed', 'The record has changed since it was read (If-Match does not match).');

/**
 * If-Match (strong comparison) against the record's current ETag; throws 412 when it does not match.
 * `etag` is asked for only when there is an If-Match (rendering and hashing the record costs).
 */
export function assertMatches(request: FastifyRequest, etag: () => string): void {
  const header = request.headers['if-match'];
  if (header === undefined) return;
  const current = etag();
  if (!tags(header).some((tag) => tag === '*' || (!tag.startsWith('W/') && tag === current))) throw preconditionFailed();
}
