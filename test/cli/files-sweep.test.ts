/**
 * `restfold files sweep` through `dist/cli.js`: it lists the stored objects no row names (older than
 * an hour: a younger one may belong to a request still writing its row), and with `--delete` removes
 * exactly those. On SQLite, and on PostgreSQL when TEST_DATABASE_URL is set.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStoreDatabase } from '../../src/store/connection/database.js';
import { cliWorkspace, runCli } from '../support/spawned-server.js';

const appSource = (withMigrations: boolean) => `
import { collection, defineApp, fields, model, serializer } from 'restfold';
${withMigrations ? "import migrations from './migrations/index.mjs';" : ''}
const Poster = model('posters', { id: fields.id(), title: fields.string({ maxLength: 40 }), image: fields.image({ nullable: true }) });
export default defineApp({ collections: [collection('posters', { serializer: serializer(Poster, { fields: ['id', 'title', 'image'] }) })]${withMigrations ? ', migrations' : ''} });
`;

const dialects = ['sqlite', ...(process.env.TEST_DATABASE_URL ? ['postgres'] : [])];

describe.each(dialects)('files sweep through the CLI on %s', (dialect) => {
  const workspace = cliWorkspace(dialect, 'files-sweep');
  const storage = () => join(workspace.folder, 'files');
  const cli = (...args: string[]) => runCli([...args, '--app', workspace.app], { ...workspace.env(), FILES_STORAGE: `file:${storage()}` });

  it('lists the old objects no row names, then removes them with --delete, leaving named and young ones', { timeout: 120_000 }, async () => {
    writeFileSync(workspace.app, appSource(false));
    expect(cli('makemigrations').status).toBe(0);
    writeFileSync(workspace.app, appSource(true));
    expect(cli('migrate').status).toBe(0);
    const old = (Date.now() - 2 * 3600_000).toString(36);
    const young = Date.now().toString(36);
    const keys = { named: `posters/${old}-named`, orphan: `posters/${old}-orphan`, young: `posters/${young}-young` };
    mkdirSync(join(storage(), 'posters'), { recursive: true });
    for (const key of Object.values(keys)) writeFileSync(join(storage(), ...key.split('/')), 'bytes');
    const database = openStoreDatabase(workspace.databaseUrl());
    try {
      const image = JSON.stringify({ key: keys.named, name: 'p.png', size: 5, content_type: 'image/png', width: 1, height: 1 });
      await database.db.insertInto('posters').values({ title: 'named', image }).execute();
      await database.db.insertInto('posters').values({ title: 'none', image: null }).execute();
    } finally {
      await database.close();
    }

    const listed = cli('files', 'sweep');
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toBe(`${keys.orphan}\n`);
    expect(existsSync(join(storage(), 'posters', `${old}-orphan`))).toBe(true);

    const removed = cli('files', 'sweep', '--delete');
    expect(removed.status, removed.stderr).toBe(0);
    expect(removed.stdout).toBe(`${keys.orphan}\n`);
    expect(existsSync(join(storage(), 'posters', `${old}-orphan`))).toBe(false);
    expect(existsSync(join(storage(), 'posters', `${old}-named`))).toBe(true);
    expect(existsSync(join(storage(), 'posters', `${young}-young`))).toBe(true);
    expect(cli('files', 'sweep').stdout).toBe('');
  });
});
