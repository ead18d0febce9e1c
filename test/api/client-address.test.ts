/**
 * TRUST_PROXY: which address a request is counted under. The client is the
 * first hop from the right of X-Forwarded-For that no trusted proxy wrote, and
 * only when it is an IP address: what a client writes to the left of its own
 * address, or garbage, must never give it a fresh allowance.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../support/api.js';
import { withPublicNotes } from './pipeline-support.js';

let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** The status of an anonymous read arriving from `peer` (the TCP address) with `forwardedFor`. */
async function read(peer: string, forwardedFor?: string): Promise<number> {
  const response = await api!.app.inject({
    method: 'GET',
    url: '/api/v1/notes/',
    remoteAddress: peer,
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  });
  return response.statusCode;
}

describe('TRUST_PROXY as a hop count', () => {
  it('counts the client the one load balancer saw, whatever the client wrote to its left', async () => {
    api = await startApi({ THROTTLE_ANON: '1/min', TRUST_PROXY: '1' }, withPublicNotes());
    // The load balancer (10.0.0.2) appends the address it saw, 203.0.113.9, to what the client sent.
    expect(await read('10.0.0.2', '198.51.100.1, 203.0.113.9')).toBe(200);
    expect(await read('10.0.0.2', '198.51.100.2, 203.0.113.9')).toBe(429);
    expect(await read('10.0.0.2', '203.0.113.9')).toBe(429);
    // Another client behind the same balancer has its own window.
    expect(await read('10.0.0.2', '198.51.100.1, 203.0.113.10')).toBe(200);
  });

  it('counts two hops back behind two proxies', async () => {
    api = await startApi({ THROTTLE_ANON: '1/min', TRUST_PROXY: '2' }, withPublicNotes());
    expect(await read('10.0.0.2', '198.51.100.1, 203.0.113.9, 10.0.0.1')).toBe(200);
    expect(await read('10.0.0.2', '198.51.100.2, 203.0.113.9, 10.0.0.1')).toBe(429);
  });

  it('falls back to the TCP peer when the client hop is not an IP address', async () => {
    api = await startApi({ THROTTLE_ANON: '1/min', TRUST_PROXY: '1' }, withPublicNotes());
    expect(await read('10.0.0.2', 'not-an-address')).toBe(200);
    // Other garbage, a zone index or 100 KB of text: still the peer's one window.
    expect(await read('10.0.0.2', 'other-garbage')).toBe(429);
    expect(await read('10.0.0.2', 'fe80::1%eth0')).toBe(429);
    expect(await read('10.0.0.2', 'x'.repeat(100_000))).toBe(429);
  });
});

describe('IPv6 clients', () => {
  it('counts the addresses of one /64 as one client, and an IPv4-mapped address as its IPv4', async () => {
    api = await startApi({ THROTTLE_ANON: '1/min', TRUST_PROXY: '1' }, withPublicNotes());
    expect(await read('10.0.0.2', '2001:db8:1:2::1')).toBe(200);
    // Another address of the same /64 (a subscriber's network): the same window.
    expect(await read('10.0.0.2', '2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe(429);
    // Another /64: its own.
    expect(await read('10.0.0.2', '2001:db8:1:3::1')).toBe(200);
    expect(await read('10.0.0.2', '203.0.113.9')).toBe(200);
    expect(await read('10.0.0.2', '::ffff:203.0.113.9')).toBe(429);
  });
});

describe('TRUST_PROXY as proxy addresses', () => {
  it('skips trusted proxies (addresses and CIDRs) from the right and counts the first other hop', async () => {
    api = await startApi({ THROTTLE_ANON: '1/min', TRUST_PROXY: '10.0.0.0/8, 192.0.2.7' }, withPublicNotes());
    expect(await read('10.1.2.3', '198.51.100.1, 203.0.113.9, 192.0.2.7, 10.0.0.5')).toBe(200);
    expect(await read('10.1.2.3', '198.51.100.2, 203.0.113.9, 192.0.2.7, 10.0.0.5')).toBe(429);
    expect(await read('10.9.9.9', '203.0.113.9')).toBe(429);
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    api = await startApi({ THROTTLE_ANON: '1/min', TRUST_PROXY: '10.0.0.0/8' }, withPublicNotes());
    expect(await read('203.0.113.50', '198.51.100.1')).toBe(200);
    expect(await read('203.0.113.50', '198.51.100.2')).toBe(429);
  });
});

describe('the login throttle behind a proxy', () => {
  it('counts every password attempt against the real client, however it rewrites X-Forwarded-For', async () => {
    api = await startApi({ THROTTLE_LOGIN: '3/min', TRUST_PROXY: '1' });
    await api.user('alice');
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      const response = await api.app.inject({
        method: 'POST',
        url: '/api/v1/auth/token/',
        remoteAddress: '10.0.0.2',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.51.100.${attempt}, 203.0.113.9` },
        payload: JSON.stringify({ username: 'alice', password: `guess-${attempt}` }),
      });
      statuses.push(response.statusCode);
    }
    expect(statuses).toEqual([400, 400, 400, 429, 429]);
  });
});
