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

The loop for every change to a model: edit \`app.ts\`, run
\`npx restfold makemigrations --app app.ts\`, review the new file in \`migrations/\`, then
\`npx restfold migrate --app app.ts\` (\`serve\` migrates too). In CI,
\`npx restfold makemigrations --app app.ts --check\` fails when a migration was forgotten.
`;

/** Why a folder cannot take a new app: the files of one already there. */
function occupied(folder: string): string | undefined {
  if (!existsSync(folder)) return undefined;
  const taken = ['app.ts', 'migrations', 'README.md'].filter((name) => readdirSync(folder).includes(name));
  return taken.length > 0 ? `${folder} already holds ${taken.join(', ')}.` : undefined;
}

/**
 * Writes the app and the README into `dir`; returns the app's path, from which the caller generates
 * the first migration into `migrations/`. Refuses (returning the reason) rather than overwrite anything.
 */
export function writeNewApp(dir: string): { app: string } | { refused: string } {
  const folder = resolve(dir);
  const refused = occupied(folder);
  if (refused) return { refused };
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'app.ts'), APP);
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  writeFileSync(join(folder, 'README.md'), README(folder.split(/[\\/]/).at(-1) || 'app', version));
  return { app: join(folder, 'app.ts') };
}
