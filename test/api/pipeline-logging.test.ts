import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp, loadConfig, migrateApp, openDatabase, type Database } from '../../src/framework/index.js';
import { createUser } from '../../src/framework/app/admin.js';
import { createToken } from '../../src/framework/stages/authentication/token.js';
import service from '../../src/service/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const PASSWORD = 'hunter2-but-longer';
let opened: { app: FastifyInstance; database: Database; testDatabase: TestDatabase } | undefined;

afterEach(async () => {
  if (!opened) return;
  await opened.app.close();
  await opened.database.close();
  await opened.testDatabase.drop();
  opened = undefined;
});

/** The service with its log lines captured, and a user `alice` with a token. */
async function start(env: Record<string, string> = {}) {
  const testDatabase = await createTestDatabase();
  const config = loadConfig({ THROTTLE_ANON: 'off', THROTTLE_USER: 'off', ...env, DATABASE_URL: testDatabase.url });
  const database = openDatabase(config.databaseUrl);
  await migrateApp(database, service);
  const lines: string[] = [];
  const app = await buildApp(service, { database, config, logStream: { write: (line) => void lines.push(line) } });
  opened = { app, database, testDatabase };
  const userId = await createUser(database, { username: 'alice', password: PASSWORD, email: '', superuser: true, permissions: [] });
  const token = await createToken(database, userId);
  const requestLines = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === 'request');
  return { app, userId, token, lines, requestLines };
}

describe('logging', () => {
  it('writes one JSON line per request with method, path, route, status, duration, request id and user id', async () => {
    const { app, userId, token, requestLines } = await start();
    const response = await app.inject({ method: 'GET', url: '/api/v1/users/7/?x=1', headers: { authorization: `Bearer ${token}` } });
    expect(response.statusCode).toBe(404);
    const anonymous = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-123' } });
    expect(anonymous.statusCode).toBe(200);

    const [signedIn, health] = requestLines();
    expect(requestLines()).toHaveLength(2);
    expect(signedIn).toMatchObject({
      level: 30,
      method: 'GET',
      path: '/api/v1/users/7/',
      route: '/api/v1/users/:id/',
      status: 404,
      request_id: response.headers['x-request-id'],
      user_id: userId,
    });
    expect(typeof signedIn!.duration_ms).toBe('number');
    expect(typeof signedIn!.time).toBe('number');
    expect(health).toMatchObject({ path: '/healthz', status: 200, request_id: 'trace-123', user_id: null });
  });

  it('never writes credentials, cookies or passwords', async () => {
    const { app, token, lines } = await start();
    const cookie = 'sessionid=cookie-secret-value; csrftoken=csrf-secret-value';
    await app.inject({ method: 'GET', url: '/api/v1/users/?search=query-secret', headers: { authorization: `Bearer ${token}`, cookie } });
    await app.inject({ method: 'GET', url: '/api/v1/users/', headers: { authorization: 'Bearer rf_wrong-token-value', cookie } });
    await app.inject({
      method: 'POST',
      url: '/api/v1/auth/token/',
      headers: { 'content-type': 'application/json', cookie },
      payload: JSON.stringify({ username: 'alice', password: PASSWORD }),
    });
    await app.inject({
      method: 'POST',
      url: '/api/v1/users/',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ username: 'bob', password: 'bobs-own-secret' }),
    });
    const log = lines.join('');
    expect(lines.length).toBeGreaterThanOrEqual(4);
    for (const secret of [token, 'rf_wrong-token-value', 'cookie-secret-value', 'csrf-secret-value', PASSWORD, 'bobs-own-secret', 'scrypt', 'query-secret']) {
      expect(log).not.toContain(secret);
    }
  });

  it('follows LOG_LEVEL: at warn, request lines are not written', async () => {
    const { app, lines } = await start({ LOG_LEVEL: 'warn' });
    await app.inject({ method: 'GET', url: '/healthz' });
    expect(lines.filter((line) => JSON.parse(line).level < 40)).toEqual([]);
  });

  it('names the request in a line a request writes at warn, and each request its own', async () => {
    const { app, lines } = await start({ LOG_LEVEL: 'warn' });
    app.get('/boom', async () => {
      throw new Error('boom');
    });
    const ids = ['first-request', 'second-request'];
    for (const id of ids) {
      const response = await app.inject({ method: 'GET', url: '/boom', headers: { 'x-request-id': id } });
      expect(response.statusCode).toBe(500);
    }
    const failures = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === 'request failed');
    expect(failures.map((entry) => [entry.level, entry.request_id])).toEqual(ids.map((id) => [50, id]));
  });
});
