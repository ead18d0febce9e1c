import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/framework/config.js';

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
      trustProxy: false,
      jwtAccessLifetime: 300,
      jwtRefreshLifetime: 86_400,
      sessionLifetime: 14 * 86_400,
    });
  });

  it('shares the default pool of 25 connections among the workers, and keeps a DB_MAX_CONNECTIONS set per process', () => {
    expect(loadConfig({ WORKERS: '2' }).maxConnections).toBe(13);
    expect(loadConfig({ WORKERS: '4' }).maxConnections).toBe(7);
    expect(loadConfig({ WORKERS: '0' }).maxConnections).toBe(Math.ceil(25 / availableParallelism()));
    expect(loadConfig({ WORKERS: '2', DB_MAX_CONNECTIONS: '25' }).maxConnections).toBe(25);
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
    expect(config.trustProxy).toBe(true);
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT must be an integer/],
    [{ DB_MAX_CONNECTIONS: '0' }, /DB_MAX_CONNECTIONS must be an integer >= 1/],
    [{ THROTTLE_ANON: '10/fortnight' }, /THROTTLE_ANON: Invalid rate/],
    [{ AUTH: 'token,basic' }, /AUTH: unknown kind "basic"/],
    [{ API_REQUIRE_AUTH: 'maybe' }, /API_REQUIRE_AUTH must be true or false/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    [{ JWT_ACCESS_LIFETIME: '5 minutes' }, /JWT_ACCESS_LIFETIME must be a duration/],
    [{ JWT_REFRESH_LIFETIME: '0' }, /JWT_REFRESH_LIFETIME must be a duration/],
    [{ SESSION_LIFETIME: '9999d' }, /SESSION_LIFETIME must be a duration from 1 second to 3650 days/],
  ])('refuses %j with a clear message', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
