import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../support/api.js';
import { describeSessions, expectRefused, login } from '../support/auth-session-suite.js';

const REDIS_URL = process.env.TEST_REDIS_URL;
if (!REDIS_URL) throw new Error('test/redis needs TEST_REDIS_URL (for example redis://127.0.0.1:6379).');

describeSessions('sessions in Redis', { REDIS_URL });

describe('sessions in Redis: storage', () => {
  let api: TestApi;
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(() => redis.quit());
  beforeEach(async () => {
    api = await startApi({ SECRET_KEY: 'session-test-secret-key-0123456789abcdef', REDIS_URL, REDIS_KEY_PREFIX: 'restfold:', SESSION_LIFETIME: '1h' });
    await api.user('alice');
  });
  afterEach(() => api.close());

  const recordKeyOf = (session: string) => `restfold:session:${createHash('sha256').update(session).digest('hex')}`;

  it('keeps sessions in Redis under a hash of the id, with the lifetime as TTL, and none in the database', async () => {
    const { session } = await login(api, 'alice');
    const ttl = await redis.ttl(recordKeyOf(session));
    expect(ttl).toBeGreaterThan(3500);
    expect(ttl).toBeLessThanOrEqual(3600);
    expect(await redis.get(recordKeyOf(session))).not.toContain(session);
    expect(await api.database.db.selectFrom('auth_sessions').selectAll().execute()).toEqual([]);
  });

  it('logout deletes the Redis entry', async () => {
    const { session } = await login(api, 'alice');
    expect((await api.request('POST', '/api/v1/auth/logout/', { token: session })).status).toBe(204);
    expect(await redis.exists(recordKeyOf(session))).toBe(0);
  });

  it('a session Redis has dropped is refused', async () => {
    const { session } = await login(api, 'alice');
    await redis.del(recordKeyOf(session));
    expectRefused(await api.request('GET', '/api/v1/users/', { token: session }));
  });
});
