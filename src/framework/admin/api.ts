/**
 * The admin reads and writes through the API itself: each page's data is a request to the
 * collection's endpoint, made in-process with the staff user's own session cookie and CSRF token,
 * so scopes, permissions, hooks and validation hold exactly as for any client, and there is no
 * second write path to keep in step. Each call is part of its page (base/admin-calls.ts): one
 * request in the log, the metrics and the throttle.
 */
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { asAdminCall, type FormReader } from '../base/admin-calls.js';

export interface ApiAnswer {
  readonly status: number;
  /** The JSON body (undefined when empty). */
  readonly body: unknown;
}

export interface ApiCall {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly url: string;
  /** An HTML form's fields, posted as the form they came in. */
  readonly form?: URLSearchParams;
  /** A form with files: the admin's request's own multipart body, streamed on as it arrives, in place of `form`. */
  readonly multipart?: { readonly body: Readable; readonly contentType: string; readonly contentLength?: string };
  /** With `multipart`: what the API's parsing hands the form's fields to, to be read as the admin means them. */
  readonly formReader?: FormReader;
  /** The session's CSRF token the admin's form carried (writes need it with the cookie). */
  readonly csrfToken?: string;
}

export async function callApi(request: FastifyRequest, call: ApiCall): Promise<ApiAnswer> {
  const headers: Record<string, string> = { accept: 'application/json' };
  // The caller's own credential and address. The page authenticated them and counted them in the
  // throttle (site.ts, staffOnly): the call is made by the page's user, neither authenticated nor
  // counted again; its cookie stays, for whatever reads it as a client's.
  if (request.headers.cookie) headers.cookie = request.headers.cookie;
  if (request.headers.host) headers.host = request.headers.host;
  if (call.csrfToken) headers['x-csrf-token'] = call.csrfToken;
  if (call.form) headers['content-type'] = 'application/x-www-form-urlencoded';
  if (call.multipart) headers['content-type'] = call.multipart.contentType;
  // The length the client declared, so the API refuses a body over its limit before reading it.
  if (call.multipart?.contentLength) headers['content-length'] = call.multipart.contentLength;
  const response = await asAdminCall({ requestId: request.id, user: request.user ?? undefined, formReader: call.formReader }, (named) =>
    request.server.inject({
      method: call.method,
      url: call.url,
      headers: { ...headers, ...named },
      remoteAddress: request.ip,
      ...(call.form && { payload: call.form.toString() }),
      ...(call.multipart && { payload: call.multipart.body }),
    }),
  );
  let body: unknown;
  try {
    body = response.body ? (JSON.parse(response.body) as unknown) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.statusCode, body };
}

/** A refused write's messages by field (`details`), and its message for the top of the form. */
export function refusal(answer: ApiAnswer): { readonly message: string; readonly details: Readonly<Record<string, readonly string[]>> } {
  const body = (typeof answer.body === 'object' && answer.body !== null ? answer.body : {}) as Record<string, unknown>;
  const details = typeof body.details === 'object' && body.details !== null ? (body.details as Record<string, readonly string[]>) : {};
  // The message under the name the app's error shape gives it (SPEC's `error`, DRF's `detail`, or `message`).
  const named = [body.message, body.error, body.detail].find((value): value is string => typeof value === 'string');
  const message = named ?? `The API answered ${answer.status}.`;
  return { message, details };
}
