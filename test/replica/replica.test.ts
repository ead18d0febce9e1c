/**
 * Read replicas against a real streaming replica: a second cluster on REPLICA_PORT, made by
 * pg_basebackup from the local cluster and dropped afterwards. Two served instances share the
 * primary and the replica: a lenient one of two workers (a replica lagging up to ten minutes stays
 * in use, so a paused replica shows what it serves) and a strict one (one second). It needs the local cluster to
 * accept replication connections from 127.0.0.1: a `host replication` line is added to its
 * pg_hba.conf (and the configuration reloaded) when it has none. scripts/test.js runs it alone, and
 * only where a local cluster and pg_createcluster exist.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, copyFileSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, onPostgres, type TestDatabase } from '../support/database.js';
import { runCli } from '../support/spawned-server.js';
import { eventually, get, send, sleep, spawnServer, userWithToken, type SpawnedServer } from '../postgres/spawned.js';

const REPLICA_PORT = 5440;
const CLUSTER = 'rf_replica_test';
const [VERSION] = readdirSync('/etc/postgresql');
const run = (command: string, args: string[]): string => execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const onPrimary = <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => onPostgres(work);
const replicaBase = (): string => {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.port = String(REPLICA_PORT);
  return url.toString();
};
const onReplica = <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => onPostgres(work, replicaBase());
const pauseReplay = () => onReplica((client) => client.query('select pg_wal_replay_pause()'));
const resumeReplay = () => onReplica((client) => client.query('select pg_wal_replay_resume()'));

/** The local cluster takes replication connections from 127.0.0.1 (trust, as its other connections). */
async function allowReplication(): Promise<void> {
  const hba = await onPrimary(async (client) => (await client.query<{ hba_file: string }>('show hba_file')).rows[0]!.hba_file);
  if (/^host\s+replication\s/m.test(readFileSync(hba, 'utf8'))) return;
  appendFileSync(hba, '\n# Added by test/replica: pg_basebackup and streaming from 127.0.0.1.\nhost replication all 127.0.0.1/32 trust\n');
  await onPrimary((client) => client.query('select pg_reload_conf()'));
}

/** A hot standby of the local cluster on REPLICA_PORT, streaming from it. */
async function createReplica(): Promise<void> {
  dropReplica();
  await allowReplication();
  run('pg_createcluster', [VERSION!, CLUSTER, '-p', String(REPLICA_PORT)]);
  const data = `/var/lib/postgresql/${VERSION}/${CLUSTER}`;
  // Emptied, not removed: the postgres user may not create it again.
  for (const entry of readdirSync(data)) rmSync(`${data}/${entry}`, { recursive: true, force: true });
  const primary = new URL(process.env.TEST_DATABASE_URL!);
  run('runuser', ['-u', 'postgres', '--', 'pg_basebackup', '-h', primary.hostname, '-p', primary.port || '5432', '-U', 'postgres', '-D', data, '-R', '-X', 'stream', '-c', 'fast']);
  // The standby's own pg_hba.conf asks for passwords; it takes the local cluster's trust instead.
  copyFileSync(`/etc/postgresql/${VERSION}/main/pg_hba.conf`, `/etc/postgresql/${VERSION}/${CLUSTER}/pg_hba.conf`);
  run('pg_ctlcluster', ['--skip-systemctl-redirect', VERSION!, CLUSTER, 'start']);
}

function dropReplica(): void {
  if (run('pg_lsclusters', ['-h']).split('\n').some((line) => line.split(/\s+/)[1] === CLUSTER)) run('pg_dropcluster', ['--stop', VERSION!, CLUSTER]);
}

/** Times the replica's scans of the test schema's `table` (its own statistics, which each server keeps for its own reads). */
const scansOf = (on: typeof onReplica, schema: string, table: string) =>
  on(async (client) => {
    await client.query('select pg_stat_clear_snapshot()');
    const { rows } = await client.query<{ scans: string }>('select coalesce(seq_scan, 0) + coalesce(idx_scan, 0) as scans from pg_stat_user_tables where schemaname = $1 and relname = $2', [schema, table]);
    return Number(rows[0]?.scans ?? 0);
  });

interface Readiness {
  status: string;
  replicas: { name: string; state: string; lag_ms: number | null }[];
}
const readiness = async (server: SpawnedServer): Promise<{ status: number; body: Readiness }> => {
  const reply = await get(server.port, '/readyz');
  return { status: reply.status, body: reply.json as Readiness };
};
const replicaState = async (server: SpawnedServer, state: string) => {
  const { status, body } = await readiness(server);
  return status === 200 && body.replicas[0]?.state === state ? body : undefined;
};

describe('read replicas (a streaming replica of the local cluster)', () => {
  let database: TestDatabase;
  /** Two workers, replicas lagging up to ten minutes in use; one process, lags of one second. */
  let lenient: SpawnedServer;
  let strict: SpawnedServer;
  let writer: { id: number; token: string };
  let reader: { id: number; token: string };

  const create = (server: SpawnedServer, title: string) =>
    send(server.port, 'POST', '/api/v1/articles/', { token: writer.token, body: { title } });
  /** The ids of the articles titled `title`, as a list read finds them (a list, unlike a token's detail read, may go to a replica). */
  const titled = async (server: SpawnedServer, title: string, token: string): Promise<number[]> => {
    const reply = await get(server.port, `/api/v1/articles/?title=${encodeURIComponent(title)}`, token);
    expect(reply.status).toBe(200);
    return (reply.json as { results: { id: number }[] }).results.map(({ id }) => id);
  };

  beforeAll(async () => {
    await createReplica();
    database = await createTestDatabase();
    writer = await userWithToken(database.url, 'writer');
    reader = await userWithToken(database.url, 'reader');
    const replicaUrl = new URL(database.url);
    replicaUrl.port = String(REPLICA_PORT);
    const env = { DATABASE_URL: database.url, DATABASE_REPLICA_URLS: replicaUrl.toString(), METRICS: 'true' };
    [lenient, strict] = await Promise.all([
      spawnServer({ ...env, DATABASE_REPLICA_MAX_LAG_MS: '600000', WORKERS: '2' }),
      spawnServer({ ...env, DATABASE_REPLICA_MAX_LAG_MS: '1000' }),
    ]);
    await eventually(() => replicaState(strict, 'in use'), 'the replica in use');
  }, 90_000);

  afterAll(async () => {
    await Promise.all([lenient?.stop(), strict?.stop()]);
    dropReplica();
    await database?.drop();
  }, 60_000);

  it('says in /readyz and the metrics that the replica is in use', async () => {
    const { status, body } = await readiness(strict);
    expect(status).toBe(200);
    expect(body.replicas).toEqual([{ name: `127.0.0.1:${REPLICA_PORT}/test`, state: 'in use', lag_ms: expect.any(Number) }]);
    const text = await (await fetch(`http://127.0.0.1:${strict.port}/metrics`)).text();
    expect(text).toContain(`restfold_db_replica_in_use{replica="127.0.0.1:${REPLICA_PORT}/test",state="in use"} 1`);
    expect(text).toMatch(/restfold_db_replica_lag_seconds\{replica="127\.0\.0\.1:5440\/test"\} \d/);
  });

  it('serves reads from the replica: its scans of the table grow, the primary\'s do not', async () => {
    expect((await create(lenient, 'counted')).status).toBe(201);
    // The reader never wrote: any replica in use serves them.
    await sleep(300);
    const replicaBefore = await scansOf(onReplica, database.schema!, 'articles');
    const primaryBefore = await scansOf(onPrimary, database.schema!, 'articles');
    for (let i = 0; i < 100; i++) expect((await get(lenient.port, '/api/v1/articles/', reader.token)).status).toBe(200);
    // A backend reports its statistics at most once a second, and an idle one after up to ten more.
    await eventually(async () => ((await scansOf(onReplica, database.schema!, 'articles')) - replicaBefore >= 100 ? true : undefined), 'the replica\'s scans', 30);
    expect((await scansOf(onPrimary, database.schema!, 'articles')) - primaryBefore).toBeLessThan(10);
  }, 45_000);

  it('shows a client its own write at once, on every process, while others read a paused replica', async () => {
    await pauseReplay();
    try {
      const created = await create(lenient, 'while paused');
      expect(created.status).toBe(201);
      // The writer reads it back on every process; the reader, on the paused replica (in use on the lenient instance), does not see it yet.
      expect(await titled(lenient, 'while paused', writer.token)).toEqual([created.json.id]);
      expect(await titled(strict, 'while paused', writer.token)).toEqual([created.json.id]);
      expect(await titled(lenient, 'while paused', reader.token)).toEqual([]);
    } finally {
      await resumeReplay();
    }
  });

  it('never misses a create in the same client\'s immediate read (500 tries, across three processes)', async () => {
    const missed: string[] = [];
    let reads = 0;
    const client = async (name: number, tries: number) => {
      for (let i = 0; i < tries; i++) {
        const [writeTo, readFrom] = i % 2 === 0 ? [lenient, strict] : [strict, lenient];
        const title = `try ${name}-${i}`;
        const created = await create(writeTo, title);
        expect(created.status).toBe(201);
        if (!(await titled(readFrom, title, writer.token)).includes(created.json.id)) missed.push(title);
        reads += 1;
      }
    };
    await Promise.all(Array.from({ length: 5 }, (_, name) => client(name, 100)));
    expect(reads).toBe(500);
    expect(missed).toEqual([]);
  }, 60_000);

  it('refuses a revoked token at once while the replica is paused', async () => {
    const revoked = await userWithToken(database.url, 'revoked');
    await pauseReplay();
    try {
      for (const server of [lenient, strict]) expect((await get(server.port, '/api/v1/articles/', revoked.token)).status).toBe(200);
      expect((await send(lenient.port, 'DELETE', '/api/v1/auth/token/', { token: revoked.token })).status).toBe(204);
      for (const server of [lenient, strict]) expect((await get(server.port, '/api/v1/articles/', revoked.token)).status).toBe(401);
    } finally {
      await resumeReplay();
    }
  });

  it('ends a session and a deactivated user\'s JWT at once while the replica is paused', async () => {
    const user = await userWithToken(database.url, 'sessioned');
    const credentials = { username: 'sessioned', password: 'pw-123456' };
    const { session } = (await send(lenient.port, 'POST', '/api/v1/auth/login/', { body: credentials })).json as { session: string };
    const { access } = (await send(strict.port, 'POST', '/api/v1/auth/jwt/', { body: credentials })).json as { access: string };
    await pauseReplay();
    try {
      for (const server of [lenient, strict]) {
        expect((await get(server.port, '/api/v1/articles/', session)).status).toBe(200);
        expect((await get(server.port, '/api/v1/articles/', access)).status).toBe(200);
      }
      expect((await send(strict.port, 'POST', '/api/v1/auth/logout/', { token: session })).status).toBe(204);
      await onPrimary((client) => client.query(`update ${database.schema}.users set is_active = false where id = $1`, [user.id]));
      for (const server of [lenient, strict]) {
        expect((await get(server.port, '/api/v1/articles/', session)).status).toBe(401);
        expect((await get(server.port, '/api/v1/articles/', access)).status).toBe(401);
      }
    } finally {
      await resumeReplay();
    }
  });

  it('skips a replica paused past the lag limit: the primary answers, fresh', async () => {
    await pauseReplay();
    try {
      const created = await create(strict, 'past the lag limit');
      expect(created.status).toBe(201);
      const lagging = await eventually(() => replicaState(strict, 'lagging'), 'the replica skipped', 10);
      expect(lagging.status).toBe('ok');
      // Reported to the ms, rounded: a lag just past the 1000 ms limit reads as 1000.
      expect(lagging.replicas[0]!.lag_ms).toBeGreaterThanOrEqual(1000);
      expect(await titled(strict, 'past the lag limit', reader.token)).toEqual([created.json.id]);
      const text = await (await fetch(`http://127.0.0.1:${strict.port}/metrics`)).text();
      expect(text).toContain(`restfold_db_replica_in_use{replica="127.0.0.1:${REPLICA_PORT}/test",state="lagging"} 0`);
    } finally {
      await resumeReplay();
    }
    await eventually(() => replicaState(strict, 'in use'), 'the replica in use again', 10);
  });

  it('connects through a failover list to the host that accepts writes, passing the standby listed first', () => {
    const listed = database.url.replace(`127.0.0.1:${new URL(database.url).port}`, `127.0.0.1:${REPLICA_PORT},127.0.0.1:${new URL(database.url).port}`);
    expect(listed).toContain(`127.0.0.1:${REPLICA_PORT},`);
    const migrate = (url: string) => runCli(['migrate'], { PATH: process.env.PATH!, DATABASE_URL: url, LOG_LEVEL: 'silent' });
    // Without target_session_attrs the standby answers, and a migration's writes fail there.
    expect(migrate(listed).status).toBe(1);
    expect(migrate(`${listed}&target_session_attrs=read-write`)).toMatchObject({ status: 0 });
  });

  it('serves every read while the replica is stopped, and says so in /readyz', async () => {
    await eventually(() => replicaState(lenient, 'in use'), 'the replica in use', 10);
    run('pg_ctlcluster', ['--skip-systemctl-redirect', VERSION!, CLUSTER, 'stop', '-m', 'immediate']);
    const statuses = await Promise.all(Array.from({ length: 50 }, () => get(lenient.port, '/api/v1/articles/', reader.token).then((reply) => reply.status)));
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    const ready = await eventually(() => replicaState(lenient, 'unreachable'), 'the replica unreachable', 10);
    expect(ready.status).toBe('ok');
  });
});
