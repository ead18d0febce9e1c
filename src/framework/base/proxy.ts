/**
 * Which proxies in front of the service are trusted (TRUST_PROXY), and so
 * which address a request comes from: the first hop, counted from the right
 * of `X-Forwarded-For`, that no trusted proxy wrote; and which client that
 * address stands for in per-client limits (an IPv6 /64 is one).
 */
import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';

/** How many proxies stand in front, or which addresses they have; null: none trusted. */
export type TrustProxy = { readonly hops: number } | { readonly proxies: readonly string[] } | null;

/** proxy-addr's (Fastify's) names for the reserved ranges. */
const RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

const isProxyAddress = (entry: string): boolean => {
  if (RANGE_NAMES.has(entry)) return true;
  const [address, bits, ...rest] = entry.split('/');
  const version = isIP(address!);
  if (version === 0 || rest.length > 0) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128));
};

/**
 * TRUST_PROXY: a hop count, or a comma-separated list of proxy addresses and CIDRs. `true` (what the
 * setting took before it took counts) is one proxy, never every hop: trusting every hop would let a
 * client choose its own address.
 */
export function parseTrustProxy(text: string | undefined): TrustProxy {
  const value = text?.trim() ?? '';
  if (value === '' || value === 'false' || value === '0') return null;
  if (/^\d+$/.test(value)) return { hops: Number(value) };
  if (['true', 'yes', 'on'].includes(value.toLowerCase())) return { hops: 1 };
  const proxies = value.split(',').map((entry) => entry.trim());
  const invalid = proxies.find((entry) => !isProxyAddress(entry));
  if (invalid !== undefined) {
    throw new Error(`TRUST_PROXY: "${invalid}" is not an IP address or CIDR (use a hop count, or addresses such as 10.0.0.0/8, loopback).`);
  }
  return { proxies };
}

/**
 * The trust setting in Fastify's terms. A hop count becomes a function, because Fastify's own
 * numeric setting trusts no hop at all; a list is compiled by Fastify (proxy-addr).
 */
export function fastifyTrustProxy(trust: TrustProxy): false | string[] | ((address: string, hop: number) => boolean) {
  if (trust === null) return false;
  if ('proxies' in trust) return [...trust.proxies];
  const { hops } = trust;
  return (_address, hop) => hop < hops;
}

/**
 * The client's address: the first untrusted hop when it is a plain IP address, the TCP peer
 * otherwise (garbage in X-Forwarded-For, or a zone index, must not become a fresh throttle key).
 */
function clientAddress(request: FastifyRequest): string {
  const address = request.ip;
  return isIP(address) !== 0 && !address.includes('%') ? address : (request.socket.remoteAddress ?? '');
}

/**
 * The client a request counts for in every limit kept per client address (throttles, the
 * anonymous live streams' cap): its address (clientAddress) as addressKey names it.
 */
export const clientKey = (request: FastifyRequest): string => addressKey(clientAddress(request));

/**
 * An address → the client it stands for: IPv4 as it is; an IPv4-mapped IPv6 address
 * (`::ffff:203.0.113.9`, how a dual-stack socket shows an IPv4 client) as its IPv4; any other IPv6
 * by its /64 (`2001:db8:1:2::/64`), the least a network hands one subscriber, who could otherwise
 * take a fresh address, and a fresh allowance, per request. Anything else as it is.
 */
export function addressKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const groups = ipv6Groups(address);
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  if (mapped) return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}

/** A valid IPv6 address (isIP's) → its eight 16-bit groups: `::` expanded, a trailing IPv4 as two groups. */
function ipv6Groups(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const parts = (text: string): number[] =>
    text === ''
      ? []
      : text.split(':').flatMap((part) => {
          if (!part.includes('.')) return [parseInt(part, 16)];
          const [a, b, c, d] = part.split('.').map(Number) as [number, number, number, number];
          return [(a << 8) | b, (c << 8) | d];
        });
  const left = parts(head);
  if (tail === undefined) return left;
  const right = parts(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}
