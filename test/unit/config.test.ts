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
    });
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
  ])('refuses %j with a clear message', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
