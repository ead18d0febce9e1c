/**
 * SIGTERM on SQLite with requests whose client has hung up: logins still
 * waiting to hash their password when the signal comes write their token after
 * the server has stopped accepting. Each must still run to its end (its token
 * stored, no 500 in the log) before the server closes the database and exits 0.
 * (On PostgreSQL the same is held by test/postgres/shutdown.test.ts, with a
 * request waiting on a lock.)
 */
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openStoreDatabase } from '../../src/store/connection/database.js';
import { sleep, spawnServer, userWithToken } from '../postgres/spawned.js';

const folder = mkdtempSync(join(tmpdir(), 'restfold-shutdown-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Logins at once: one password hash per core at a time, so the last ones are hashed seconds after the signal. */
const LOGINS = 24;

it('lets logins whose client hung up finish before it closes the database', async () => {
  const url = `sqlite:${join(folder, 'db.sqlite3')}`;
  await userWithToken(url, 'leaver');
  const server = await spawnServer({ DATABASE_URL: url, THROTTLE_LOGIN: 'off' });

  const body = JSON.stringify({ username: 'leaver', password: 'pw-123456' });
  const logins = Array.from({ length: LOGINS }, () => {
    const login = httpRequest({
      host: '127.0.0.1',
      port: server.port,
      method: 'POST',
      path: '/api/v1/auth/token/',
      headers: { 'content-type': 'application/json' },
      agent: false,
    });
    login.on('error', () => {});
    login.end(body);
    return login;
  });
  // Long enough for the server to have read them all, far shorter than hashing them all takes.
  await sleep(300);
  for (const login of logins) login.destroy();
  server.kill('SIGTERM');

  expect(await server.exited).toBe(0);
  const errors = server.output().split('\n').filter((line) => line.includes('"level":50'));
  expect(errors).toEqual([]);
  const database = openStoreDatabase(url);
  try {
    const tokens = await database.db.selectFrom('auth_tokens').select((eb) => eb.fn.countAll().as('count')).executeTakeFirstOrThrow();
    // userWithToken's own, and one per login.
    expect(Number(tokens.count)).toBe(1 + LOGINS);
  } finally {
    await database.close();
  }
});
