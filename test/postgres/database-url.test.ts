/**
 * What a PostgreSQL URL asks of its connections beyond what pg does itself: libpq's several-host
 * failover list is refused by name (rather than failing as an invalid URL), and so is a
 * target_session_attrs Restfold cannot honour; read-write is honoured, each new connection checked.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/spawned-server.js';
import { createTestDatabase, testDialect } from '../support/database.js';

const migrate = (url: string) => runCli(['migrate'], { PATH: process.env.PATH, DATABASE_URL: url, LOG_LEVEL: 'silent' });

describe('DATABASE_URL settings Restfold cannot honour', () => {
  it('refuses several hosts, naming them and not the password', () => {
    const run = migrate('postgres://app:s3cret@db1:5432,db2:5432/shop?target_session_attrs=read-write');
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('DATABASE_URL names several hosts (db1:5432,db2:5432): Restfold connects to one.');
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
