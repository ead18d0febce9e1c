/**
 * The API's style as an app chooses it (docs/api-style.md): where its routers mount the collections
 * and whether their paths end in a slash, the exception handler that shapes its errors, and the
 * keywords its Authorization header takes. Nothing chosen: the style SPEC.md describes.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';

/** Paths end in `/` and the bare path redirects (308); both answer; or paths end bare and `/` redirects. */
export type TrailingSlash = 'required' | 'optional' | 'absent';


/** What an exception handler answers in place of the default envelope. */
export interface ErrorResponse {
  readonly status: number;
  /** Sent as JSON. */
  readonly body: unknown;
  /** Added to the error's own (Allow, WWW-Authenticate, Retry-After), which stay; a `Content-Type` here replaces `application/json; charset=utf-8`. */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Chooses the status and body of an error of the collection API (DRF's EXCEPTION_HANDLER);
 * undefined leaves that error to the default envelope. Simple routes keep their plain text.
 */
export type ExceptionHandler = (error: ApiError, request: FastifyRequest) => ErrorResponse | undefined;

export interface ApiStyle {
  /** The routers' prefixes: a path under one of them is the JSON API's (its errors too). */
  readonly prefixes: readonly string[];
  readonly exceptionHandler: ExceptionHandler | undefined;
  /** The Authorization schemes accepted, case-insensitively; the first is the one WWW-Authenticate names. */
  readonly credentialKeywords: readonly string[];
}


/** `Bearer`, and `Token` as Django REST Framework's clients send it. */
export const DEFAULT_KEYWORDS: readonly string[] = ['Bearer', 'Token'];

/** Where the collections are mounted when the app names no routers. */
export const DEFAULT_PREFIX = '/api/v1';

const DEFAULT_STYLE: ApiStyle = { prefixes: [DEFAULT_PREFIX], exceptionHandler: undefined, credentialKeywords: DEFAULT_KEYWORDS };

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's style (set by buildApp). */
    restfoldStyle?: ApiStyle;
    /** The trailing-slash rule of the router whose instance this is (unset: required). */
    restfoldTrailingSlash?: TrailingSlash;
    /** The API root of the router whose instance this is, when it serves one (unset: the first router's). */
    restfoldRoot?: string;
  }
}

/** The app's style; the default for a request made outside an app (`authenticate` called by a tool on a request of its own making has no server). */
export const styleOf = (request: FastifyRequest): ApiStyle => (request.server as FastifyRequest['server'] | undefined)?.restfoldStyle ?? DEFAULT_STYLE;

export const isApiPath = (request: FastifyRequest): boolean => styleOf(request).prefixes.some((prefix) => request.url.startsWith(prefix));

/** What ends a path a router with this rule builds: `/`, or nothing where paths end bare. */
export const endOf = (slash: TrailingSlash | undefined): string => (slash === 'absent' ? '' : '/');

/** What ends a path the request's router builds. */
export const pathEnd = (request: FastifyRequest): string => endOf(request.server.restfoldTrailingSlash);

const KEYWORD = /^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*$/;

export function assertKeywords(keywords: readonly string[]): void {
  if (keywords.length === 0) throw new Error('credentialKeywords: name at least one scheme.');
  for (const keyword of keywords) if (!KEYWORD.test(keyword)) throw new Error(`credentialKeywords: "${keyword}" is not an HTTP authentication scheme.`);
}

/** The error as the app's exception handler shapes it; undefined when there is none or it leaves this error alone. */
export function handledError(reply: FastifyReply, error: ApiError): FastifyReply | undefined {
  const handler = styleOf(reply.request).exceptionHandler;
  if (!handler) return undefined;
  try {
    const handled = handler(error, reply.request);
    if (!handled) return undefined;
    // Bytes, which Fastify sends with the Content-Type as set (it would add a charset to a JSON string's).
    const body = Buffer.from(JSON.stringify(handled.body));
    return reply.status(handled.status).type('application/json; charset=utf-8').headers({ ...error.headers, ...handled.headers }).send(body);
  } catch (failure) {
    // A handler that throws (or answers a status HTTP has not) leaves the error to the default envelope, never to a hang.
    reply.request.log.error({ err: failure }, 'exceptionHandler failed');
    return undefined;
  }
}

/** The error with WWW-Authenticate naming the app's first keyword. */
export function challenged(request: FastifyRequest, error: ApiError): ApiError {
  const [keyword] = styleOf(request).credentialKeywords;
  if (error.headers['WWW-Authenticate'] === undefined || error.headers['WWW-Authenticate'] === keyword) return error;
  return new ApiError(error.status, error.code, error.message, error.details, { ...error.headers, 'WWW-Authenticate': keyword! });
}
