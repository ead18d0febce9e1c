/**
 * `restfold new <dir>`: a new app's first files. The app is a template; its first migration is
 * generated from it by the same code as `restfold makemigrations`, so the two never disagree.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const APP = `/**
 * A Restfold app: one collection of notes. Add fields, then run \`npx restfold makemigrations --app app.ts\`:
 * it writes the next migration into ./migrations/, where every command finds it (nothing to import).
 */
import { collection, defineApp, fields, isAuthenticated, model, serializer } from 'restfold';

const Note = model('notes', {
  id: fields.id(),
  title: fields.string({ maxLength: 200 }),
  done: fields.boolean({ default: false }),
  created_at: fields.timestamp({ default: () => new Date() }),
});

const notes = collection('notes', {
  serializer: serializer(Note, {
    fields: ['id', 'title', 'done', 'created_at'],
    readOnly: ['id', 'created_at'],
    search: ['title'],
  }),
  filterFields: ['done'],
  orderingFields: ['created_at', 'title'],
  permissions: [isAuthenticated],
});

export default defineApp({ collections: [notes] });
`;

const TEST = `// app.ts's notes, tested with restfold/testing: \`npm test\` runs every tests/*.test.ts with node --test.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { expectStatus, testApp, type TestApp } from 'restfold/testing';
import app from '../app.js';

describe('notes', () => {
  let t: TestApp;
  // The app on a database of its own (SQLite in memory; PostgreSQL when TEST_DATABASE_URL is set), its migrations applied.
  before(async () => {
    t = await testApp(app, { migrations: new URL('../migrations/', import.meta.url) });
  });
  after(() => t?.close());
  beforeEach(() => t.reset());

  it('are for signed-in users only', async () => {
    expectStatus(await t.client().get('/api/v1/notes/'), 401);
  });

  it('are created, updated and filtered', async () => {
    const me = t.client().as(await t.createUser({ username: 'me' }));
    const note = expectStatus(await me.post('/api/v1/notes/', { title: 'Write tests' }), 201).json;
    assert.equal(note.done, false);
    expectStatus(await me.patch(\`/api/v1/notes/\${note.id}/\`, { done: true }), 200);
    const done = expectStatus(await me.get('/api/v1/notes/', undefined, { query: { done: true } }), 200).json;
    assert.deepEqual(done.results.map((found: { title: string }) => found.title), ['Write tests']);
  });
});
`;

/** npm init's placeholder, which a new app's test script replaces. */
const NO_TEST = 'echo "Error: no test specified" && exit 1';
const TEST_SCRIPT = 'node --import tsx --test tests/*.test.ts';

const README = (name: string, version: string): string => `# ${name}

A JSON HTTP API on Restfold: \`app.ts\` declares a \`notes\` collection, served at
\`/api/v1/notes/\` with list, detail, create, update, partial update and delete, pagination,
filtering (\`?done=true\`), ordering, search, authentication and permissions. \`migrations/\` holds
its schema's history, generated from the declarations; every command finds the migrations there
by convention (each \`NNNN_words.ts\` module, in name order), so \`app.ts\` imports none of them.

Restfold is not on a registry: it is installed from the tarball \`npm pack\` writes in a checkout
of it, into this folder (or one above it, where Node finds it from here):

\`\`\`sh
npm init -y                                  # if this folder has no package.json yet
npm install path/to/restfold-${version}.tgz
npm install-scripts approve better-sqlite3 esbuild
npm install-scripts deny restfold
\`\`\`

npm 11 ends the install listing the packages whose install scripts \`allowScripts\` in
\`package.json\` does not cover yet: better-sqlite3's (it builds the embedded database's native
module), esbuild's (the compiler that runs \`app.ts\` as it is) and Restfold's own \`prepare\`, which
builds a checkout of Restfold and has nothing to do in the tarball, shipped built. The last two
commands record those decisions there. \`app.ts\` runs as it is, an ES module whatever
\`package.json\`'s "type" says; to type-check it, \`npm install --save-dev typescript @types/node\`
and run \`npx tsc --noEmit --strict --module nodenext app.ts\`. An app on PostgreSQL alone can
install with \`--omit=optional\`, which leaves out the embedded database's driver. Then, from
this folder:

\`\`\`sh
npx restfold createuser --app app.ts --username me --password 'choose-a-password'
npx restfold token create --app app.ts --username me     # prints a token
npx restfold serve --app app.ts                           # http://127.0.0.1:8000/api/v1/
curl -H "Authorization: Bearer <token>" http://127.0.0.1:8000/api/v1/notes/
\`\`\`

The data goes to \`./data/restfold.sqlite3\` unless \`DATABASE_URL\` names another SQLite file
or a PostgreSQL database (\`postgres://user@host/db\`).

\`tests/notes.test.ts\` tests the app with Restfold's test kit (\`restfold/testing\`, see its
guide, docs/testing-your-app.md in the package): \`npm test\` runs every \`tests/*.test.ts\` with
\`node --test\`, each file on an in-memory SQLite database of its own, or on PostgreSQL in a schema of
its own (dropped after it) when \`TEST_DATABASE_URL=postgres://user@host/db\` is set.

The loop for every change to a model: edit \`app.ts\`, run
\`npx restfold makemigrations --app app.ts\`, review the new file in \`migrations/\`, then
\`npx restfold migrate --app app.ts\` (\`serve\` migrates too). In CI,
\`npx restfold makemigrations --app app.ts --check\` fails when a migration was forgotten.
`;

/** Why a folder cannot take a new app: the files of one already there. */
function occupied(folder: string): string | undefined {
  if (!existsSync(folder)) return undefined;
  const taken = ['app.ts', 'migrations', 'README.md', 'tests'].filter((name) => readdirSync(folder).includes(name));
  return taken.length > 0 ? `${folder} already holds ${taken.join(', ')}.` : undefined;
}

/** package.json with the test script: made, or the script added where none but npm init's placeholder is. */
function withTestScript(folder: string, name: string): void {
  const file = join(folder, 'package.json');
  const found: { scripts?: Record<string, string> } = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { name, private: true };
  const scripts = found.scripts ?? {};
  if (scripts.test !== undefined && scripts.test !== NO_TEST) return;
  writeFileSync(file, `${JSON.stringify({ ...found, scripts: { ...scripts, test: TEST_SCRIPT } }, null, 2)}\n`);
}

/**
 * Writes the app, its tests and the README into `dir` (and the test script into its package.json); returns the app's path, from which the caller generates
 * the first migration into `migrations/`. Refuses (returning the reason) rather than overwrite anything.
 */
export function writeNewApp(dir: string): { app: string } | { refused: string } {
  const folder = resolve(dir);
  const refused = occupied(folder);
  if (refused) return { refused };
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'app.ts'), APP);
  mkdirSync(join(folder, 'tests'));
  writeFileSync(join(folder, 'tests', 'notes.test.ts'), TEST);
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  const name = folder.split(/[\\/]/).at(-1) || 'app';
  writeFileSync(join(folder, 'README.md'), README(name, version));
  withTestScript(folder, name);
  return { app: join(folder, 'app.ts') };
}
