import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../src/framework/app/admin.js';
import { signingKeys } from '../../src/framework/app/secrets.js';
import { buildApp, loadConfig, migrateApp, openDatabase } from '../../src/framework/index.js';
import service from '../../src/service/app.js';
import { PASSWORD, startApi, type Reply, type TestApi } from '../support/api.js';

/** A log destination that keeps every line. */
function logCapture(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}

describe('secrets stay out of responses and logs', () => {
  const SECRET_KEY = 'log-test-secret-key-9f8e7d6c5b4a39281706';
  let api: TestApi;
  afterEach(() => api.close());

  it('a full token, JWT and session cycle logs no password, credential, CSRF token or secret key', async () => {
    const { stream, lines } = logCapture();
    api = await startApi({ SECRET_KEY, LOG_LEVEL: 'trace' }, undefined, { logStream: stream });
    const alice = await api.user('alice');
    const replies: Reply[] = [];
    const call = async (method: string, url: string, options: Parameters<TestApi['request']>[2] = {}) => {
      const reply = await api.request(method, url, options);
      replies.push(reply);
      return reply;
    };
    const credentials = { username: 'alice', password: PASSWORD };
    const NEW_PASSWORD = 'a-brand-new-password-42';
    const WRONG_PASSWORD = 'wrong-password-never-logged';

    expect((await call('POST', '/api/v1/auth/token/', { body: { username: 'alice', password: WRONG_PASSWORD } })).status).toBe(400);
    const { token } = (await call('POST', '/api/v1/auth/token/', { body: credentials })).json;
    expect((await call('GET', '/api/v1/users/', { token })).status).toBe(200);
    expect((await call('DELETE', '/api/v1/auth/token/', { token })).status).toBe(204);

    const { access, refresh } = (await call('POST', '/api/v1/auth/jwt/', { body: credentials })).json;
    const { access: renewed, refresh: rotated } = (await call('POST', '/api/v1/auth/jwt/refresh/', { body: { refresh } })).json;
    expect((await call('GET', '/api/v1/users/', { token: renewed })).status).toBe(200);

    const login = await call('POST', '/api/v1/auth/login/', { body: credentials });
    const { session, csrf_token: csrf } = login.json;
    const cookie = String([login.headers['set-cookie']].flat()[0]).split(';')[0]!;
    const headers = { cookie, 'x-csrf-token': csrf };
    expect((await call('POST', '/api/v1/articles/', { headers, body: { title: 'logged' } })).status).toBe(201);
    expect((await call('PATCH', `/api/v1/users/${alice.id}/`, { headers, body: { password: NEW_PASSWORD, current_password: PASSWORD } })).status).toBe(200);
    expect((await call('POST', '/api/v1/auth/logout/', { headers })).status).toBe(204);
    expect((await call('GET', '/api/v1/users/', { headers })).status).toBe(401);

    const secrets = [PASSWORD, NEW_PASSWORD, WRONG_PASSWORD, SECRET_KEY, token, alice.token, access, refresh, renewed, rotated, session, csrf, cookie.split('=')[1]!];
    expect(lines.filter((line) => line.includes('"msg":"request"')).length).toBe(replies.length);
    for (const line of lines) {
      for (const secret of secrets) expect(line).not.toContain(secret);
    }
    for (const reply of replies) {
      for (const secret of [PASSWORD, NEW_PASSWORD, WRONG_PASSWORD, SECRET_KEY]) expect(reply.body).not.toContain(secret);
    }
  });
});

describe('SECRET_KEY when unset', () => {
  const folders: string[] = [];
  afterEach(() => {
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });

  /** The example service on a SQLite file in `folder`, as `npm start` would run it, with its log lines. */
  async function serveFrom(folder: string, env: Record<string, string> = {}) {
    const config = loadConfig({ DATABASE_URL: `sqlite:${join(folder, 'db.sqlite3')}`, LOG_LEVEL: 'info', ...env });
    const database = openDatabase(config.databaseUrl);
    await migrateApp(database, service);
    const { stream, lines } = logCapture();
    const app = await buildApp(service, { database, config, logStream: stream });
    return {
      app,
      lines,
      obtainJwt: async () =>
        (await app.inject({ method: 'POST', url: '/api/v1/auth/jwt/', payload: { username: 'alice', password: PASSWORD } })).json().access as string,
      close: async () => {
        await app.close();
        await database.close();
      },
      database,
    };
  }

  it('is generated once into the data folder, owner-only, with a warning that never shows it; restarts reuse it', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'restfold-secret-'));
    folders.push(folder);
    const first = await serveFrom(folder);
    await createUser(first.database, { username: 'alice', password: PASSWORD, email: '', superuser: false, permissions: [] });
    const file = join(folder, 'secret_key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const key = readFileSync(file, 'utf8').trim();
    expect(key.length).toBeGreaterThanOrEqual(32);
    expect(first.lines.some((line) => line.includes('"level":40') && line.includes('SECRET_KEY is not set'))).toBe(true);
    for (const line of first.lines) expect(line).not.toContain(key);

    const access = await first.obtainJwt();
    await expect(jwtVerify(access, signingKeys(key).jwt)).resolves.toBeTruthy();
    await first.close();

    const second = await serveFrom(folder);
    try {
      expect(readFileSync(file, 'utf8').trim()).toBe(key);
      const reply = await second.app.inject({ method: 'GET', url: '/api/v1/users/', headers: { authorization: `Bearer ${access}` } });
      expect(reply.statusCode).toBe(200);
      for (const line of second.lines) expect(line).not.toContain(key);
    } finally {
      await second.close();
    }
  });

  it('is not generated when SECRET_KEY is set, and the tokens are signed with a key derived from it', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'restfold-secret-'));
    folders.push(folder);
    const SECRET_KEY = 'an-operator-chosen-secret-key-0123456789';
    const app = await serveFrom(folder, { SECRET_KEY });
    try {
      await createUser(app.database, { username: 'alice', password: PASSWORD, email: '', superuser: false, permissions: [] });
      expect(existsSync(join(folder, 'secret_key'))).toBe(false);
      await expect(jwtVerify(await app.obtainJwt(), signingKeys(SECRET_KEY).jwt)).resolves.toBeTruthy();
      expect(app.lines.some((line) => line.includes('SECRET_KEY is not set'))).toBe(false);
    } finally {
      await app.close();
    }
  });
});
