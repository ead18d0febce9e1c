/** A request URL's query string as parameters: read by negotiation, parsing and the routes alike. */
import { emptyDetails, throwIfInvalid } from './errors.js';

/** A URL without a query string: one empty map, not one per request. */
const NO_PARAMETERS: ReadonlyMap<string, string> = new Map();

/** The request's parameters, the last value winning when one is repeated; 400 if one is not UTF-8. */
export function queryParameters(url: string): ReadonlyMap<string, string> {
  const start = url.indexOf('?');
  if (start === -1) return NO_PARAMETERS;
  const query = url.slice(start + 1);
  assertUtf8Query(query);
  return new Map(new URLSearchParams(query));
}

/** URLSearchParams would quietly turn `%FF` into U+FFFD, so a filter would look for a value never sent. */
function assertUtf8Query(query: string): void {
  const details = emptyDetails();
  for (const pair of query.split('&')) {
    try {
      // A `%` that starts no escape stays a literal `%`, as URLSearchParams reads it.
      decodeURIComponent(pair.replace(/%(?![0-9a-f]{2})/gi, '%25'));
    } catch {
      details[pair.split('=', 1)[0]!] = ['Not valid percent-encoded UTF-8.'];
    }
  }
  throwIfInvalid(details, 'Invalid query parameters.');
}
