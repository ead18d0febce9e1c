/**
 * The PgBouncer suite's ground: a fresh database on TEST_DATABASE_URL's cluster, reached directly
 * (to set up and to look) and through a PgBouncer in front of that cluster (TEST_PGBOUNCER_URL in
 * transaction mode, TEST_PGBOUNCER_SESSION_URL in session mode; `.ci/run` starts both, passing every
 * database through by name; TEST_PGBOUNCER_PREPARED_URL in transaction mode carrying named statements,
 * which needs PgBouncer 1.21 or later and which `.ci/run` starts where one is installed). A database, not a schema, per suite: PgBouncer refuses the `options`
 * startup parameter the other suites choose their schema with. Also: PgBouncer's admin console,
 * and a mixed load of every kind of request the service makes statements for.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { onPostgres } from '../support/database.js';
import { send, type HttpReply } from '../postgres/spawned.js';

export const transactionPooler = process.env.TEST_PGBOUNCER_URL;
export const sessionPooler = process.env.TEST_PGBOUNCER_SESSION_URL;
export const preparedPooler = process.env.TEST_PGBOUNCER_PREPARED_URL;

export interface PooledDatabase {
  /** Straight to PostgreSQL. */
  readonly direct: string;
  /** Through the pooler. */
  readonly pooled: string;
  readonly name: string;
  drop(): Promise<void>;
}

/** `url` naming the database `name`. */
function onDatabase(url: string, name: string): string {
  const named = new URL(url);
  named.pathname = `/${name}`;
  return named.toString();
}

export async function pooledDatabase(poolerUrl: string): Promise<PooledDatabase> {
  const name = `rf_pgbouncer_${randomBytes(6).toString('hex')}`;
  await onPostgres((client) => client.query(`CREATE DATABASE ${name}`));
  return {
    direct: onDatabase(process.env.TEST_DATABASE_URL!, name),
    pooled: onDatabase(poolerUrl, name),
    name,
    // FORCE: the pooler keeps server connections to it open.
    drop: () => onPostgres((client) => client.query(`DROP DATABASE ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** Runs `work` on the admin console of the PgBouncer at `poolerUrl` (simple queries only: SHOW, SET). */
export async function onAdminConsole<T>(poolerUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: onDatabase(poolerUrl, 'pgbouncer') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A PgBouncer setting, as its admin console shows it. */
export const pgbouncerSetting = (poolerUrl: string, key: string): Promise<string> =>
  onAdminConsole(poolerUrl, async (client) => (await client.query<{ key: string; value: string }>('SHOW CONFIG')).rows.find((row) => row.key === key)!.value);

/** `restfold migrate` from the build, with `env`: its exit code and output. */
export async function migrateCli(env: Record<string, string>): Promise<{ code: number; output: string }> {
  const cli = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, 'migrate'], { env: { PATH: process.env.PATH, ...env } });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, output: stdout + stderr };
  }
}

/** What a spawned server needs to run through a pooler: no throttles (login's included), and the pooled URL. */
export const servedThrough = (url: string, env: Record<string, string> = {}): Record<string, string> => ({
  DATABASE_URL: url,
  THROTTLE_LOGIN: 'off',
  ...env,
});

/**
 * `clients` clients, each doing `rounds` rounds of every kind of request against the servers on
 * `ports` (in turn): a token obtained and revoked, a JWT obtained and refreshed, a session logged
 * in and out, lists, details, creates (one and in bulk), a PATCH with If-Match (and one with the
 * stale ETag), a delete, Surface B's posts, /readyz. Every answer is checked against the status it
 * must have; returns the ones that differed ("what: status body") and how many requests were made.
 */
export async function mixedLoad(ports: readonly number[], user: { username: string; password: string }, clients: number, rounds: number) {
  const unexpected: string[] = [];
  let requests = 0;
  const client = async (index: number) => {
    for (let round = 0; round < rounds; round++) {
      const port = ports[(index + round) % ports.length]!;
      const call = async (what: string, status: number, method: string, path: string, options: Parameters<typeof send>[3] = {}): Promise<HttpReply | undefined> => {
        requests += 1;
        const reply = await send(port, method, path, options);
        if (reply.status === status) return reply;
        unexpected.push(`${what}: ${reply.status} ${JSON.stringify(reply.json)}`);
        return undefined;
      };
      const token = (await call('token obtain', 200, 'POST', '/api/v1/auth/token/', { body: user }))?.json.token as string | undefined;
      if (!token) continue;
      await call('list', 200, 'GET', '/api/v1/articles/?page_size=5&ordering=-created_at', { token });
      const created = await call('create', 201, 'POST', '/api/v1/articles/', { token, body: { title: `c${index}.${round}`, body: 'text' } });
      const id = created?.json.id as number | undefined;
      const detail = id && (await call('detail', 200, 'GET', `/api/v1/articles/${id}/`, { token }));
      if (detail) {
        const etag = detail.headers.etag as string;
        await call('PATCH with If-Match', 200, 'PATCH', `/api/v1/articles/${id}/`, { token, body: { title: `p${index}.${round}` }, headers: { 'if-match': etag } });
        await call('PATCH with a stale If-Match', 412, 'PATCH', `/api/v1/articles/${id}/`, { token, body: { title: 'stale' }, headers: { 'if-match': etag } });
        await call('delete', 204, 'DELETE', `/api/v1/articles/${id}/`, { token });
      }
      const bulk = await call('bulk create', 201, 'POST', '/api/v1/articles/', { token, body: [{ title: `b${index}.${round}.1` }, { title: `b${index}.${round}.2` }] });
      const jwt = (await call('JWT obtain', 200, 'POST', '/api/v1/auth/jwt/', { body: user }))?.json as { access: string; refresh: string } | undefined;
      const refreshed = jwt && ((await call('JWT refresh', 200, 'POST', '/api/v1/auth/jwt/refresh/', { body: { refresh: jwt.refresh } }))?.json as { access: string } | undefined);
      if (refreshed && bulk) await call('detail with a refreshed JWT', 200, 'GET', `/api/v1/articles/${(bulk.json as { id: number }[])[0]!.id}/`, { token: refreshed.access });
      const session = (await call('login', 200, 'POST', '/api/v1/auth/login/', { body: user }))?.json.session as string | undefined;
      if (session) {
        await call('users with a session', 200, 'GET', '/api/v1/users/', { token: session });
        await call('logout', 204, 'POST', '/api/v1/auth/logout/', { token: session });
      }
      await call('token revoke', 204, 'DELETE', '/api/v1/auth/token/', { token });
      await call('a revoked token', 401, 'GET', '/api/v1/users/', { token });
      const post = await call('post create', 201, 'POST', '/api/posts', { body: { title: `t${index}.${round}`, content: 'c', published: true } });
      if (post) await call('post detail', 200, 'GET', `/api/posts/${post.json.id}`);
      await call('readyz', 200, 'GET', '/readyz');
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, index) => client(index)));
  return { unexpected, requests };
}
