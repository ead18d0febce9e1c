/**
 * The requests the admin makes in-process to the API (admin/api.ts), told apart from a client's by
 * a random id in a header, known only for the call's life, so no client can pass for the admin.
 * The write unit logs them where HISTORY=admin (the default) logs the admin's writes alone, as
 * Django's LogEntry does. A form with files the admin passes on as it came, its bytes streamed
 * through unread: the parsing stage hands the admin's form reader the fields as they were read
 * (which button was pressed, what to show again if the write is refused) and reads what the
 * reader makes of them (the admin's own fields left out) instead.
 *
 * A call is part of its page, not a request of its own (docs/admin.md, One write path): it bears
 * the page's request id, writes no request line and counts in no metric, and is made by the
 * page's user, whom the page authenticated (its CSRF field checked) and counted in the throttle
 * once, so the call is neither authenticated nor counted again.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { AuthUser } from './auth-user.js';

const HEADER = 'x-restfold-admin-call';

/** The fields as read → the fields the serializer reads. */
export type FormReader = (form: URLSearchParams) => URLSearchParams;

export interface AdminCall {
  /** The page's request id, which the call bears (whatever it logs is the page's). */
  readonly requestId: string;
  /** The page's staff user; undefined: the call authenticates its credentials and is throttled as any request. */
  readonly user?: AuthUser | undefined;
  readonly formReader?: FormReader | undefined;
}

const calls = new Map<string, AdminCall>();
/** The calls recognised, so a call stays one once its id is gone (its last hooks run after the admin has its answer). */
const recognised = new WeakMap<FastifyRequest, AdminCall>();

/** `call` made with the header that names it the admin's (and names its page and form reader). */
export async function asAdminCall<T>(adminCall: AdminCall, call: (header: Readonly<Record<string, string>>) => Promise<T>): Promise<T> {
  const id = randomBytes(18).toString('base64url');
  calls.set(id, adminCall);
  try {
    return await call({ [HEADER]: id });
  } finally {
    calls.delete(id);
  }
}

const namedIn = (headers: IncomingHttpHeaders): AdminCall | undefined => {
  const id = headers[HEADER];
  return typeof id === 'string' ? calls.get(id) : undefined;
};

const adminCallOf = (request: FastifyRequest): AdminCall | undefined => {
  const known = recognised.get(request);
  if (known) return known;
  const call = namedIn(request.headers);
  if (call) recognised.set(request, call);
  return call;
};

/** Whether the request is one of the admin's calls. */
export const isAdminCall = (request: FastifyRequest): boolean => adminCallOf(request) !== undefined;

/** The request id of the page whose call these headers name, if they name one (read before the request is made). */
export const pageRequestId = (headers: IncomingHttpHeaders): string | undefined => namedIn(headers)?.requestId;

/** The page's user, authenticated and counted once for the page, when the request is a call of its. */
export const pageUserOf = (request: FastifyRequest): AuthUser | undefined => adminCallOf(request)?.user;

/** The form reader the admin's call names, if the request is one that names one. */
export const formReaderOf = (request: FastifyRequest): FormReader | undefined => adminCallOf(request)?.formReader;
