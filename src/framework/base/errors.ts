/**
 * Typed errors. Every stage throws one of these; each surface renders them in
 * one place (the JSON envelope for collections, plain text for simple routes).
 */
import { RecordProtected, RecordRefused } from '../../core/refused.js';

/** The error envelope's `code`s (docs/errors.md). */
export type ErrorCode =
  | 'validation_failed'
  | 'parse_error'
  | 'not_authenticated'
  | 'authentication_failed'
  | 'permission_denied'
  | 'not_found'
  | 'method_not_allowed'
  | 'not_acceptable'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'throttled'
  | 'precondition_failed'
  | 'protected'
  | 'server_error'
  | 'service_unavailable';

/** Field name → messages. `non_field_errors` holds what belongs to no field. */
export type ErrorDetails = Record<string, string[]>;

/**
 * Empty details to fill with names taken from a request: with no prototype, a
 * key like `__proto__` is an ordinary key (on `{}` it would be swallowed, and the error lost).
 */
export const emptyDetails = (): ErrorDetails => Object.create(null) as ErrorDetails;

/**
 * An error answered to the client in the error envelope `{error, code, details?}` with its status; throw one
 * from a hook, a scope or a handler to refuse.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * 400 `validation_failed`, with messages by field (`{ quantity: ['Not enough stock.'] }`, `non_field_errors`
 * for the whole).
 */
export const validationFailed = (details: ErrorDetails, message = 'Invalid input.'): ApiError =>
  new ApiError(400, 'validation_failed', message, details);

/**
 * A detail path naming no possible record (`/comments/first/` where ids are integers): 400
 * `validation_failed` as SPEC.md says, in a class of its own so that an app's exception handler can
 * answer it as Django REST Framework does, 404.
 */
/** Throws 400 `validation_failed` with `details` when they name anything; a check that found nothing returns. */
export function throwIfInvalid(details: ErrorDetails, message?: string): void {
  if (Object.keys(details).length > 0) throw validationFailed(details, message);
}

/**
 * A path's record id that no record can have (`/articles/abc/`): a 400 by default, which an exception handler
 * may answer 404.
 */
export class MalformedPathId extends ApiError {
  constructor(details: ErrorDetails) {
    super(400, 'validation_failed', 'Invalid id.', details);
    this.name = 'MalformedPathId';
  }
}

/** A delete that rows of `tables` still refer to (a foreign key with on_delete `restrict`): 400 naming them. */
const protectedRecord = (tables: readonly string[]): ApiError =>
  new ApiError(
    400,
    'protected',
    'This record cannot be deleted: other records refer to it.',
    tables.length > 0
      ? Object.fromEntries(tables.map((table) => [table, [`Records of ${table} refer to this record; delete or change them first.`]]))
      : { non_field_errors: ['Other records refer to this record; delete or change them first.'] },
  );

/** 400 `parse_error`: a body that cannot be read. */
export const parseError = (message: string): ApiError =>
  new ApiError(400, 'parse_error', message, { non_field_errors: [message] });

/** 401 `not_authenticated`: the request carries no credential, and needs one. */
export const notAuthenticated = (): ApiError =>
  new ApiError(401, 'not_authenticated', 'Authentication credentials were not provided.', undefined, {
    'WWW-Authenticate': 'Bearer',
  });

export const authenticationFailed = (message = 'Invalid or expired credentials.'): ApiError =>
  new ApiError(401, 'authentication_failed', message, undefined, { 'WWW-Authenticate': 'Bearer' });

/** 403 `permission_denied`. */
export const permissionDenied = (message = 'You do not have permission to perform this action.'): ApiError =>
  new ApiError(403, 'permission_denied', message);

/** 404 `not_found`. */
export const notFound = (message = 'Not found.'): ApiError => new ApiError(404, 'not_found', message);

export const methodNotAllowed = (method: string, allowed: readonly string[]): ApiError =>
  new ApiError(405, 'method_not_allowed', `Method "${method}" not allowed.`, undefined, {
    Allow: allowed.join(', '),
  });

export const databaseUnavailable = (): ApiError =>
  new ApiError(503, 'service_unavailable', 'The database is unreachable; try again shortly.', undefined, {
    'Retry-After': '5',
  });

const codeByStatus: Record<number, ErrorCode> = {
  400: 'parse_error',
  401: 'not_authenticated',
  403: 'permission_denied',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  412: 'precondition_failed',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  429: 'throttled',
  503: 'service_unavailable',
};

/** An error some library threw with an HTTP status of its own (Fastify's body limit, say). */
function statusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('statusCode' in error)) return undefined;
  const status = (error as { statusCode: unknown }).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}

/**
 * Anything thrown → an ApiError. Client errors raised by libraries keep their
 * status; everything else is a 500 whose cause the caller must log, not show.
 */
export function toApiError(error: unknown, isDatabaseUnavailable: (error: unknown) => boolean): ApiError {
  if (error instanceof ApiError) return error;
  // A write the database refused for what the record says (a unique clash, a missing reference).
  if (error instanceof RecordRefused) return validationFailed({ ...error.details });
  if (error instanceof RecordProtected) return protectedRecord(error.tables);
  if (isDatabaseUnavailable(error)) return databaseUnavailable();
  const status = statusOf(error);
  if (status !== undefined) {
    const code = codeByStatus[status] ?? 'parse_error';
    const message = error instanceof Error ? error.message : 'Bad request.';
    return new ApiError(status, code, message, code === 'parse_error' ? { non_field_errors: [message] } : undefined);
  }
  return new ApiError(500, 'server_error', 'A server error occurred.');
}
