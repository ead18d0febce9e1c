/**
 * Conditional requests (RFC 9110 §13): a strong ETag per record, a weak one
 * per list page; If-None-Match answers 304, If-Match guards writes with 412.
 */
import { hash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';

/** A strong validator of a representation's JSON text. */
export function strongEtag(json: string): string {
  return `"${hash('sha256', json, 'base64url').slice(0, 27)}"`;
}

export const weakEtag = (json: string): string => `W/${strongEtag(json)}`;

function tags(header: string): string[] {
  return header.split(',').map((tag) => tag.trim()).filter(Boolean);
}

const opaque = (tag: string): string => (tag.startsWith('W/') ? tag.slice(2) : tag);

/** If-None-Match (weak comparison): whether the client's copy is current, so 304 applies. */
export function notModified(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (!header) return false;
  return tags(header).some((tag) => tag === '*' || opaque(tag) === opaque(etag));
}

export const preconditionFailed = (): ApiError =>
  new ApiError(412, 'precondition_failed', 'The record has changed since it was read (If-Match does not match).');

/** If-Match (strong comparison) against the record's current ETag; throws 412 when it does not match. */
export function assertMatches(request: FastifyRequest, etag: string): void {
  const header = request.headers['if-match'];
  if (header === undefined) return;
  if (!tags(header).some((tag) => tag === '*' || (!tag.startsWith('W/') && tag === etag))) throw preconditionFailed();
}
