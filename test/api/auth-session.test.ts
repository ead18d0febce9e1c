import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { startApi, type TestApi } from '../support/api.js';
import { describeSessions, expectRefused, login } from '../support/auth-session-suite.js';

describeSessions('sessions in the database', {});

describe('sessions in the database: storage', () => {
  let api: TestApi;
  beforeEach(async () => {
    api = await startApi({ SECRET_KEY: 'session-test-secret-key-0123456789abcdef' });
    await api.user('alice');
  });
  afterEach(() => api.close());

  it('stores only a hash of the session id', async () => {
    const { session } = await login(api, 'alice');
    const rows = await api.database.db.selectFrom('auth_sessions').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(session);
    expect(rows[0]!.id_hash).toBe(createHash('sha256').update(session).digest('hex'));
  });

  it('refuses a session past its expiry', async () => {
    const { session } = await login(api, 'alice');
    await api.database.db.updateTable('auth_sessions').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).execute();
    expectRefused(await api.request('GET', '/api/v1/users/', { token: session }));
  });

  it('keeps the cookie and the session for SESSION_LIFETIME', async () => {
    const custom = await startApi({ SECRET_KEY: 'session-test-secret-key-0123456789abcdef', SESSION_LIFETIME: '2h' });
    try {
      await custom.user('bob');
      const before = Date.now();
      const { setCookie } = await login(custom, 'bob');
      expect(setCookie).toMatch(/Max-Age=7200/);
      const row = await custom.database.db.selectFrom('auth_sessions').select('expires_at').executeTakeFirstOrThrow();
      const expires = new Date(row.expires_at as string).getTime();
      expect(expires).toBeGreaterThanOrEqual(before + 7200_000 - 1000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 7200_000);
    } finally {
      await custom.close();
    }
  });
});
