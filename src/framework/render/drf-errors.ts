/**
 * Django REST Framework's error bodies, as a ready exception handler (docs/api-style.md): a
 * validation failure is its fields' messages at the top level (`{"title": ["This field is
 * required."]}`, `{"non_field_errors": [...]}`), every other error `{"detail": "..."}`. Clients
 * written for DRF (react-admin's DRF data provider, say) read the server's message from these.
 */
import type { ErrorResponse, ExceptionHandler } from '../base/style.js';
import { MalformedPathId, notFound, type ApiError, type ErrorDetails } from '../base/errors.js';

/**
 * DRF's JSONRenderer names no charset, and react-admin's DRF auth providers compare the header with
 * `application/json` exactly: any other value hides the server's message behind the status text.
 */
const DRF_JSON = { 'Content-Type': 'application/json' } as const;

const INDEXED = /^(\d+)(?:\.(.+))?$/;

/**
 * A bulk create's errors (`<index>.<field>`) as DRF's ListSerializer answers them: one object per
 * record up to the last that failed, `{}` for those that passed; undefined when some key is not
 * indexed (then every key stays where it is).
 */
function perRecord(details: ErrorDetails): ErrorDetails[] | undefined {
  const entries = Object.entries(details);
  if (entries.length === 0) return undefined;
  const records: ErrorDetails[] = [];
  for (const [key, messages] of entries) {
    const match = INDEXED.exec(key);
    if (!match) return undefined;
    const index = Number(match[1]);
    // Bounded by the bulk create's `max`: indexes come from the records sent.
    while (records.length <= index) records.push({});
    records[index]![match[2] ?? 'non_field_errors'] = messages;
  }
  return records;
}

function drfBody(error: ApiError): unknown {
  if (error.code !== 'validation_failed' || !error.details) return { detail: error.message };
  return perRecord(error.details) ?? error.details;
}

/**
 * DRF's error shapes. A detail path naming no possible record (MalformedPathId) is DRF's 404, and
 * a server error says only `{"detail": "A server error occurred."}` (its request id is in X-Request-ID).
 */
export const drfExceptionHandler: ExceptionHandler = (error): ErrorResponse => {
  const shown = error instanceof MalformedPathId ? notFound() : error;
  return { status: shown.status, body: drfBody(shown), headers: DRF_JSON };
};
