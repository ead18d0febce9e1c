/**
 * What a PostgreSQL URL asks of its connections beyond what pg does itself: libpq's several-host
 * failover list is tried host by host (test/replica/replica.test.ts shows it passing a standby for
 * the primary), a target_session_attrs Restfold cannot honour is refused by name, and read-write
 * is honoured, each new connection checked.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/spawned-server.js';
import { createTestDatabase, testDialect } from '../support/database.js';

const migrate = (url: string) => runCli(['migrate'], { PATH: process.env.PATH, DATABASE_URL: url, LOG_LEVEL: 'silent' });

describe('DATABASE_URL settings Restfold cannot honour', () => {
  it('fails when no host of the list answers, without showing the password', () => {
    const run = migrate('postgres://app:s3cret@127.0.0.1:1,127.0.0.1:2/shop?target_session_attrs=read-write');
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('ECONNREFUSED 127.0.0.1:2');
    expect(run.stderr).not.toContain('s3cret');
  });

  it('refuses a target_session_attrs other than any, read-write and primary', () => {
    const run = migrate('postgres://app@db1/shop?target_session_attrs=standby');
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('target_session_attrs=standby is not supported');
  });
});

describe.runIf(testDialect === 'postgres')('target_session_attrs=read-write', () => {
  it('refuses a connection to a server that does not accept writes, and takes one that does', async () => {
    const database = await createTestDatabase();
    try {
      const url = new URL(database.url);
      url.searchParams.set('target_session_attrs', 'read-write');
      expect(migrate(url.toString())).toMatchObject({ status: 0 });
      // A server that does not accept writes, as a standby would not.
      url.searchParams.set('options', `${url.searchParams.get('options')} -c default_transaction_read_only=on`);
      const refused = migrate(url.toString());
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain('does not accept writes');
    } finally {
      await database.drop();
    }
  });
});

describe.runIf(testDialect === 'postgres')('several hosts (libpq failover list)', () => {
  it('connects to the first host of the list that answers', async () => {
    const database = await createTestDatabase();
    try {
      const { host } = new URL(database.url);
      // Nothing listens on port 1: the next host is tried.
      expect(migrate(database.url.replace(host, `127.0.0.1:1,${host}`))).toMatchObject({ status: 0 });
    } finally {
      await database.drop();
    }
  });
});
