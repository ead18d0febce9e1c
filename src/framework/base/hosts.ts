/**
 * The host and scheme a request was addressed to, checked before any work:
 * they become the absolute links the service writes (Location, pagination),
 * so a malformed or foreign Host must be refused, not echoed into a link.
 */
import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { validationFailed, type ApiError } from './errors.js';

/** `name[:port]` or `[IPv6][:port]`; names of letters, digits, `-` and `_` labels. */
const HOST = /^(?:((?:[a-z0-9_-]{1,63}\.)*[a-z0-9_-]{1,63}\.?)|\[([0-9a-f:.]+)\])(?::(\d{1,5}))?$/i;
const MAX_NAME_LENGTH = 253;

/** The host name of `host[:port]`, lower-cased and without a trailing dot; undefined when not valid. */
function hostName(host: string): string | undefined {
  const match = HOST.exec(host);
  if (!match) return undefined;
  const [, name, ipv6, port] = match;
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65_535)) return undefined;
  if (ipv6 !== undefined) return isIP(ipv6) === 6 ? `[${ipv6.toLowerCase()}]` : undefined;
  return name!.length <= MAX_NAME_LENGTH ? name!.toLowerCase().replace(/\.$/, '') : undefined;
}

/**
 * ALLOWED_HOSTS: host names (no port), `.example.com` for that domain and its subdomains, or `*`.
 * Empty: any valid host.
 */
export function parseAllowedHosts(text: string | undefined): readonly string[] {
  const entries = (text ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
  return entries.map((entry) => {
    if (entry === '*') return entry;
    const domain = entry.startsWith('.') ? '.' : '';
    const name = hostName(entry.slice(domain.length));
    // A port would make hostName answer for the name alone: refused, as it would never match.
    if (name === undefined || /:\d+$/.test(entry)) {
      throw new Error(`ALLOWED_HOSTS: "${entry}" is not a host name (use names such as api.example.com, .example.com or *; no port).`);
    }
    return `${domain}${name}`;
  });
}

const allows = (patterns: readonly string[], name: string): boolean =>
  patterns.some((pattern) =>
    pattern === '*' || pattern === name || (pattern.startsWith('.') && (name === pattern.slice(1) || name.endsWith(pattern))),
  );

/**
 * The check run on every request: the scheme (X-Forwarded-Proto from a trusted proxy) must be
 * http or https, and the host (Host, or X-Forwarded-Host from a trusted proxy) a valid
 * `host[:port]` among `allowedHosts`. No host at all (HTTP/1.0) is served: see requestOrigin.
 * `anyHostPaths` answer whatever valid host is named: health probes address a machine by its IP.
 */
export function hostCheck(allowedHosts: readonly string[], anyHostPaths: ReadonlySet<string>): (request: FastifyRequest) => ApiError | undefined {
  return (request) => {
    if (request.protocol !== 'http' && request.protocol !== 'https') {
      return validationFailed({ 'x-forwarded-proto': ['Must be http or https.'] }, 'Invalid X-Forwarded-Proto header.');
    }
    if (request.host === '') return undefined;
    const name = hostName(request.host);
    if (name === undefined) return validationFailed({ host: ['Must be a host name or IP address, with an optional port.'] }, 'Invalid Host header.');
    if (allowedHosts.length > 0 && !allows(allowedHosts, name) && !anyHostPaths.has(request.url.split('?')[0]!)) {
      return validationFailed({ host: ['This service does not answer for that host (ALLOWED_HOSTS).'] }, 'Host not allowed.');
    }
    return undefined;
  };
}

/**
 * `scheme://host[:port]` of the request, for absolute links. A request with no Host (HTTP/1.0)
 * gets the address it reached the server at, as CGI's SERVER_NAME would give (worked out only
 * then: every absolute link asks for the origin).
 */
function requestOrigin(request: FastifyRequest): string {
  if (request.host) return `${request.protocol}://${request.host}`;
  const { localPort } = request.socket;
  const localAddress = request.socket.localAddress?.replace(/%.*$/, '');
  const server = !localAddress ? 'localhost' : isIP(localAddress) === 6 ? `[${localAddress}]:${localPort}` : `${localAddress}:${localPort}`;
  return `${request.protocol}://${server}`;
}

/** The request's own absolute URL (scheme and host from X-Forwarded-* only behind a trusted proxy; checked above). */
export function absoluteUrl(request: FastifyRequest, path = request.url): URL {
  return new URL(path, requestOrigin(request));
}

/**
 * A path of unreserved and sub-delimiter characters and valid escapes, with no dot segment, `?`,
 * `#`, `\` or leading `//`: one the URL parser would keep as it is.
 */
const PLAIN_PATH = /^\/(?!\/)(?:[\w\-.~!$&'()*+,;=:@/]|%[0-9a-f]{2})*$/i;
const DOT_SEGMENT = /\/(?:\.|%2e)/i;
/** Per origin as sent: the origin as the URL parser writes it (host lower-cased, default port dropped), and the bases below it linkBelow checked. */
interface KnownOrigin {
  readonly written: string;
  /** By the request URL: the collection path's absolute link, or null where it goes through the URL parser. */
  readonly bases: Map<string, string | null>;
}
const origins = new Map<string, KnownOrigin>();
/** Bounded: with ALLOWED_HOSTS empty a client may name any host, and any URL. */
const ORIGINS_KEPT = 64;
const BASES_KEPT = 64;

function knownOrigin(origin: string): KnownOrigin {
  let known = origins.get(origin);
  if (known === undefined) {
    if (origins.size >= ORIGINS_KEPT) origins.clear();
    known = { written: new URL(origin).origin, bases: new Map() };
    origins.set(origin, known);
  }
  return known;
}

/**
 * `absoluteUrl(request, path).toString()`, without parsing the URL again when `path` is plain: a
 * created record's Location and the API root's links are built on every such request.
 */
export function absoluteLink(request: FastifyRequest, path: string): string {
  const origin = requestOrigin(request);
  if (!PLAIN_PATH.test(path) || DOT_SEGMENT.test(path)) return new URL(path, origin).toString();
  return `${knownOrigin(origin).written}${path}`;
}

/** The request's path without its query, ending in a slash: the collection a create was addressed to. */
const collectionPath = (url: string): string => url.split('?')[0]!.replace(/\/?$/, '/');

/** A tail that, after a plain path ending in a slash, keeps the whole plain: PLAIN_PATH's characters, no dot segment, no leading slash. */
const PLAIN_TAIL = /^(?!\/)(?:[\w\-.~!$&'()*+,;=:@/]|%[0-9a-f]{2})*$/i;
const DOT_TAIL = /(?:^|\/)(?:\.|%2e)/i;

/**
 * `absoluteLink(request, <the request's collection path><tail>)`: a created record's Location. The
 * collection's part, the same on every create there, is checked and joined to the origin once per
 * origin and request URL; only the tail (the record's key) is checked per create.
 */
export function linkBelow(request: FastifyRequest, tail: string): string {
  const known = knownOrigin(requestOrigin(request));
  let base = known.bases.get(request.url);
  if (base === undefined) {
    if (known.bases.size >= BASES_KEPT) known.bases.clear();
    const path = collectionPath(request.url);
    base = PLAIN_PATH.test(path) && !DOT_SEGMENT.test(path) ? `${known.written}${path}` : null;
    known.bases.set(request.url, base);
  }
  return base === null || !PLAIN_TAIL.test(tail) || DOT_TAIL.test(tail) ? absoluteLink(request, `${collectionPath(request.url)}${tail}`) : `${base}${tail}`;
}
