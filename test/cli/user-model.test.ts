/**
 * An app's own user model through `dist/cli.js` (docs/authentication.md): `makemigrations` writes the
 * app's migration altering the framework's `users` table (never creating it), `--check` then finds
 * no changes, `migrate` applies it after the framework's migrations, `check` finds the database as
 * declared, and `createuser` holds users to the app's fields (an e-mail required and unique). On
 * SQLite, and on PostgreSQL when TEST_DATABASE_URL is set.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliWorkspace } from '../support/spawned-server.js';

const appSource = (withMigrations: boolean) => `
import { collection, defineApp, fields, serializer, User } from 'restfold';
${withMigrations ? "import migrations from './migrations/index.mjs';" : ''}
const Member = User.extend({ bio: fields.text({ nullable: true }), email: fields.email({ unique: true }) });
const members = collection('members', { serializer: serializer(Member, { fields: ['id', 'username', 'email', 'bio'], readOnly: ['id'] }) });
export default defineApp({ collections: [members], userModel: Member${withMigrations ? ', migrations' : ''} });
`;

const dialects = ['sqlite', ...(process.env.TEST_DATABASE_URL ? ['postgres'] : [])];

describe.each(dialects)('an app user model through the CLI on %s', (dialect) => {
  const { folder, app, cli } = cliWorkspace(dialect, 'user-model');

  it("generates the app's migration as changes to the users table, then no changes; migrates and checks", () => {
    writeFileSync(app, appSource(false));
    const made = cli('makemigrations');
    expect(made.status, made.stderr).toBe(0);
    expect(made.stdout).toContain('alter column users.email');
    expect(made.stdout).toContain('add column users.bio');
    expect(made.stdout).not.toContain('create table');
    expect(readdirSync(join(folder, 'migrations')).sort()).toEqual(['0001_initial.mjs', 'index.mjs']);
    expect(readFileSync(join(folder, 'migrations', '0001_initial.mjs'), 'utf8')).toContain("op.addColumn('users', 'bio'");

    writeFileSync(app, appSource(true));
    expect(cli('makemigrations', '--check')).toMatchObject({ status: 0, stdout: 'No changes.\n' });
    const migrated = cli('migrate');
    expect(migrated.status, migrated.stderr).toBe(0);
    expect(migrated.stdout).toContain('0001_initial');
    expect(cli('check')).toMatchObject({ status: 0, stdout: 'The database matches the declarations.\n' });
  });

  it("creates users held to the app's fields: an e-mail required, then unique", () => {
    const withoutEmail = cli('createuser', '--username', 'ann', '--password', 'a-password-1');
    expect(withoutEmail.status).not.toBe(0);
    expect(withoutEmail.stderr).toContain("email: This field may not be blank.");
    expect(cli('createuser', '--username', 'ann', '--password', 'a-password-1', '--email', 'ann@example.org').status).toBe(0);
    const sameEmail = cli('createuser', '--username', 'bob', '--password', 'a-password-1', '--email', 'ann@example.org');
    expect(sameEmail.status).not.toBe(0);
    expect(sameEmail.stderr).toContain('with the e-mail "ann@example.org" already exists');
  });
});
