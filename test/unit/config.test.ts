import { describe, expect, it } from 'vitest';
import { loadConfig, shares } from '../../src/framework/app/config.js';

describe('configuration from the environment', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      port: 8000,
      host: '127.0.0.1',
      databaseUrl: 'sqlite:./data/restfold.sqlite3',
      maxConnections: 25,
      maxIdleConnections: 5,
      auth: ['token', 'jwt', 'session'],
      requireAuth: true,
      workers: 1,
      logLevel: 'info',
      throttleAnonymous: { limit: 100, windowSeconds: 60 },
      throttleUser: { limit: 1000, windowSeconds: 60 },
      maxBodyBytes: 1_048_576,
      trustProxy: null,
      allowedHosts: [],
      maxClientConnections: 128,
      bodyMinBytesPerSecond: 1024,
      bodyTimeoutMs: 5000,
      jwtAccessLifetime: 300,
      jwtRefreshLifetime: 86_400,
      sessionLifetime: 14 * 86_400,
    });
  });

  it('keeps live streams to half of MAX_CONNECTIONS, the rest for ordinary requests, and refuses a setting above it', () => {
    expect(loadConfig({}).live).toMatchObject({ maxStreams: 64, maxStreamsPerUser: 5, recheckMs: 2000 });
    expect(loadConfig({ MAX_CONNECTIONS: '2000' }).live.maxStreams).toBe(1000);
    expect(loadConfig({ MAX_BODY_BYTES: '65536' }).live.maxStreams).toBe(512);
    expect(loadConfig({ LIVE_MAX_STREAMS: '10' }).live.maxStreams).toBe(10);
    expect(() => loadConfig({ LIVE_MAX_STREAMS: '1000' })).toThrow(/LIVE_MAX_STREAMS must leave half of MAX_CONNECTIONS \(128\).*at most 64/);
    expect(() => loadConfig({ LIVE_RECHECK_MS: '10' })).toThrow(/LIVE_RECHECK_MS/);
  });

  it('splits the pool among the workers as evenly as it goes', () => {
    expect(shares(25, 1)).toEqual([25]);
    expect(shares(25, 2)).toEqual([13, 12]);
    expect(shares(25, 4)).toEqual([7, 6, 6, 6]);
    expect(shares(5, 4)).toEqual([2, 1, 1, 1]);
    expect(shares(2, 4)).toEqual([1, 1, 0, 0]);
    // The config keeps the service's totals, whatever WORKERS says; cluster.ts hands out the shares.
    expect(loadConfig({ WORKERS: '4' })).toMatchObject({ maxConnections: 25, maxIdleConnections: 5 });
  });

  it('reads DATABASE_REPLICA_URLS beside a PostgreSQL DATABASE_URL only, with the lag limit and poll interval', () => {
    expect(loadConfig({})).toMatchObject({ replicaUrls: [], replicaMaxLagMs: 1000, replicaPollMs: 100 });
    // The SQLite readers' bounds (docs/databases.md, SQLite's reader threads): stated defaults, and settable.
    expect(loadConfig({}).sqliteReaderCacheKib).toBe(2000);
    expect([2, 3, 4]).toContain(loadConfig({}).sqliteReaderThreads);
    expect(loadConfig({ SQLITE_READER_THREADS: '1', SQLITE_READER_CACHE_KIB: '512' })).toMatchObject({ sqliteReaderThreads: 1, sqliteReaderCacheKib: 512 });
    const primary = 'postgres://app@db1/app';
    expect(loadConfig({ DATABASE_URL: primary, DATABASE_REPLICA_URLS: ' postgres://app@r1/app, postgresql://app@r2/app ', DATABASE_REPLICA_MAX_LAG_MS: '250' })).toMatchObject({
      replicaUrls: ['postgres://app@r1/app', 'postgresql://app@r2/app'],
      replicaMaxLagMs: 250,
    });
    expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'postgres://app@r1/app' })).toThrow('DATABASE_REPLICA_URLS needs a PostgreSQL DATABASE_URL');
    expect(() => loadConfig({ DATABASE_URL: primary, DATABASE_REPLICA_URLS: 'sqlite:./copy.sqlite3' })).toThrow('each URL must start with postgres://');
    expect(() => loadConfig({ DATABASE_URL: primary, DATABASE_REPLICA_POLL_MS: '5' })).toThrow('DATABASE_REPLICA_POLL_MS must be an integer >= 10');
  });

  it('prepares statements unless DB_PREPARED_STATEMENTS=false (behind a transaction pooler)', () => {
    expect(loadConfig({}).preparedStatements).toBe(true);
    expect(loadConfig({ DB_PREPARED_STATEMENTS: 'false' }).preparedStatements).toBe(false);
    expect(() => loadConfig({ DB_PREPARED_STATEMENTS: 'never' })).toThrow(/DB_PREPARED_STATEMENTS must be true or false/);
  });

  it('reads HISTORY as admin (the default), a true word (every write) or a false one (none), refusing any other word', () => {
    expect([undefined, '', ' Admin ', 'ADMIN'].map((value) => loadConfig({ HISTORY: value }).history)).toEqual(['admin', 'admin', 'admin', 'admin']);
    expect(['true', 'YES', ' on', '1'].map((value) => loadConfig({ HISTORY: value }).history)).toEqual(['all', 'all', 'all', 'all']);
    expect(['false', 'No', 'off ', '0'].map((value) => loadConfig({ HISTORY: value }).history)).toEqual(['off', 'off', 'off', 'off']);
    for (const value of ['sometimes', 'admins', 'constructor']) expect(() => loadConfig({ HISTORY: value })).toThrow(`HISTORY must be admin, true or false (got "${value}").`);
    expect(() => loadConfig({ METRICS: 'admin' })).toThrow('METRICS must be true or false (got "admin").');
  });

  it('reads lifetimes in seconds or with a unit', () => {
    const config = loadConfig({ JWT_ACCESS_LIFETIME: '90', JWT_REFRESH_LIFETIME: '12h', SESSION_LIFETIME: '30m' });
    expect([config.jwtAccessLifetime, config.jwtRefreshLifetime, config.sessionLifetime]).toEqual([90, 43_200, 1800]);
  });

  it('reads rates, switches and lists', () => {
    const config = loadConfig({ THROTTLE_ANON: '5/sec', THROTTLE_USER: 'off', API_REQUIRE_AUTH: 'false', AUTH: 'jwt, token', TRUST_PROXY: '1' });
    expect(config.throttleAnonymous).toEqual({ limit: 5, windowSeconds: 1 });
    expect(config.throttleUser).toBeNull();
    expect(config.requireAuth).toBe(false);
    expect(config.auth).toEqual(['jwt', 'token']);
    expect(config.trustProxy).toEqual({ hops: 1 });
  });

  it('reads TRUST_PROXY as a hop count or a list of proxy addresses and CIDRs', () => {
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toEqual({ hops: 2 });
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBeNull();
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBeNull();
    // The older boolean form: one proxy, never every hop.
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toEqual({ hops: 1 });
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.0.2.7,fd00::/8, loopback' }).trustProxy).toEqual({
      proxies: ['10.0.0.0/8', '192.0.2.7', 'fd00::/8', 'loopback'],
    });
  });

  it('reads ALLOWED_HOSTS as names, domains and *, lower-cased', () => {
    expect(loadConfig({ ALLOWED_HOSTS: 'API.example.com, .example.org,[::1], 127.0.0.1' }).allowedHosts).toEqual([
      'api.example.com',
      '.example.org',
      '[::1]',
      '127.0.0.1',
    ]);
    expect(loadConfig({ ALLOWED_HOSTS: '*' }).allowedHosts).toEqual(['*']);
  });

  it('sizes the default connection cap to 128 MiB of bodies in flight, from 64 to 1024 connections', () => {
    expect(loadConfig({ MAX_BODY_BYTES: '262144' }).maxClientConnections).toBe(512);
    expect(loadConfig({ MAX_BODY_BYTES: '10485760' }).maxClientConnections).toBe(64);
    expect(loadConfig({ MAX_BODY_BYTES: '1024' }).maxClientConnections).toBe(1024);
  });

  it('reads the connection cap and the body rate', () => {
    const config = loadConfig({ MAX_CONNECTIONS: '50', BODY_MIN_BYTES_PER_SECOND: '4096', BODY_TIMEOUT_MS: '2000' });
    expect([config.maxClientConnections, config.bodyMinBytesPerSecond, config.bodyTimeoutMs]).toEqual([50, 4096, 2000]);
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT must be an integer/],
    [{ DB_MAX_CONNECTIONS: '0' }, /DB_MAX_CONNECTIONS must be an integer >= 1/],
    [{ SQLITE_READER_THREADS: '0' }, /SQLITE_READER_THREADS must be an integer >= 1/],
    [{ SQLITE_READER_CACHE_KIB: '10' }, /SQLITE_READER_CACHE_KIB must be an integer >= 64/],
    [{ THROTTLE_ANON: '10/fortnight' }, /THROTTLE_ANON: Invalid rate/],
    [{ AUTH: 'token,basic' }, /AUTH: unknown kind "basic"/],
    [{ API_REQUIRE_AUTH: 'maybe' }, /API_REQUIRE_AUTH must be true or false/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    [{ JWT_ACCESS_LIFETIME: '5 minutes' }, /JWT_ACCESS_LIFETIME must be a duration/],
    [{ JWT_REFRESH_LIFETIME: '0' }, /JWT_REFRESH_LIFETIME must be a duration/],
    [{ SESSION_LIFETIME: '9999d' }, /SESSION_LIFETIME must be a duration from 1 second to 3650 days/],
    [{ TRUST_PROXY: '10.0.0.0/33' }, /TRUST_PROXY: "10.0.0.0\/33" is not an IP address or CIDR/],
    [{ TRUST_PROXY: '10.0.0.1,proxy.internal' }, /TRUST_PROXY: "proxy.internal" is not/],
    [{ ALLOWED_HOSTS: 'example.com:8000' }, /ALLOWED_HOSTS: "example.com:8000" is not a host name/],
    [{ ALLOWED_HOSTS: 'a b' }, /ALLOWED_HOSTS: "a b" is not a host name/],
    [{ MAX_CONNECTIONS: '0' }, /MAX_CONNECTIONS must be an integer >= 1/],
  ])('refuses %j with a clear message', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
