#!/usr/bin/env node
/**
 * `restfold <command>`: new, migrate, makemigrations, check, createuser, token create|revoke,
 * permissions list|add|remove, groups list|create|delete|add|remove, files sweep, serve, schema.
 * Every command but new, schema, makemigrations and check migrates first and works on the server's DATABASE_URL.
 */
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { register } from 'node:module';
import { createInterface } from 'node:readline/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, extname, join, resolve } from 'node:path';
import { createToken, revokeUserTokens } from './framework/stages/authentication/token.js';
import {
  AdminInputError,
  addToGroups,
  createGroup,
  createUser,
  deleteGroup,
  grantGroupPermissions,
  grantPermissions,
  groupNamed,
  groupPermissions,
  groupsOf,
  listGroups,
  listPermissions,
  effectivePermissions,
  removeFromGroups,
  revokeGroupPermissions,
  revokePermissions,
  userNamed,
} from './framework/app/admin.js';
import { serveWorkers } from './framework/app/cluster.js';
import { sweepFiles } from './framework/app/files-sweep.js';
import { migrateFramework } from './framework/app/definition.js';
import { writeNewApp } from './scaffold.js';
import { openUnconnectedDatabase } from './store/connection/database.js';
import {
  appBaseline,
  appState,
  buildApp,
  declaredSchemaDifferences,
  loadConfig,
  loadDotEnv,
  loadMigrations,
  migrateFrameworkAndApp,
  openConfiguredDatabase,
  planMigration,
  writeMigration,
  type AppDefinition,
  type Config,
  type Database,
  type AppliedMigrations,
  type MigrationFolder,
  type MigrationPlan,
  type Migrations,
  type Renames,
} from './framework/index.js';

const USAGE = `Usage: restfold <command> [options]

Commands:
  new DIR                            write a new app into DIR: app.ts, its first migration, a README
  serve [--app FILE]                 migrate, then serve HTTP on HOST:PORT (WORKERS processes)
  migrate [--app FILE] [--contract]  apply pending migrations, the framework's then the app's,
                                     saying which were whose; a contract step (which drops what
                                     the release before still uses) waits for --contract
  makemigrations [--app FILE] [--name NAME] [--rename TABLE.OLD=NEW ...] [--check]
                                     write the migration from the migrations' state to the
                                     declarations; --check: exit 1 naming the changes instead
  check [--app FILE]                 compare the database with the declarations (exit 1 if they differ)
  schema [--app FILE]                print the OpenAPI document as JSON (no database needed)
  createuser --username U [--password P | --password-stdin] [--email E]
             [--staff] [--superuser] [--permission NAME ...] [--group G ...]
                                     --superuser makes a staff superuser
  token create --username U          print a new API token for U
  token revoke --username U          revoke every token of U
  permissions list --username U      print the permissions U holds, one a line
                                     (their own; --all: with their groups')
  permissions list --group G         print the permissions group G gives
  permissions add (--username U | --group G) NAME ...
  permissions remove (--username U | --group G) NAME ...
  groups list [--username U]         print the groups (U's), one a line
  groups create NAME ... [--permission P ...]
  groups delete NAME ...
  groups add --username U NAME ...   put U in the groups
  groups remove --username U NAME ...
  files sweep [--delete]             list the stored files no row names (older than an hour);
                                     --delete: remove them

--app FILE: a JavaScript or TypeScript module (path from the current directory)
whose default export is made with defineApp(); without it, the example service.
Its migrations are found by convention in migrations/ beside it: every module
there named NNNN_words (0001_initial.ts, or .mjs, .js: the app's language; not
index.* nor _helper.*), run in name order after the framework's. makemigrations
writes them there, with an index.* listing them for an app that would rather
import them: an app that passes defineApp({ migrations }) gets exactly those,
and the folder is not read. A compiled app (dist/app.js) reads the .js files
compiled beside it; run makemigrations on its source. The accounts' commands
(createuser, token, permissions, groups) need --app only for an app with a user model
of its own (User.extend); without it they migrate the framework's tables alone.
Settings come from the environment (DATABASE_URL, PORT, ...; see README).`;

/** What `migrate` left for `--contract`: steps that drop what servers of the release before still use. */
const heldMessage = (held: readonly string[]): string =>
  `Waiting for \`restfold migrate --contract\`, to run once no server of the release before serves: ${held.join(', ')}.`;

class UsageError extends Error {}
const isUserMistake = (error: unknown): boolean =>
  error instanceof UsageError || error instanceof AdminInputError || (error instanceof TypeError && String((error as { code?: string }).code).startsWith('ERR_PARSE_ARGS'));

const TYPESCRIPT = new Set(['.ts', '.mts', '.cts']);

/** An app with its migrations, whether it passes them or they were found beside it. */
type LoadedApp = AppDefinition & { readonly migrations: Migrations };

async function loadApp(file: string | undefined): Promise<LoadedApp> {
  if (file && !existsSync(resolve(file))) throw new UsageError(`No app file at ${resolve(file)}.`);
  const url = file ? pathToFileURL(resolve(file)).href : new URL('./service/app.js', import.meta.url).href;
  // TypeScript apps run as they are, with no build step: tsx's loader compiles them as Node imports them,
  // and ours (registered last, so asked first) has a .ts module load as an ES module in any package.
  if (file && TYPESCRIPT.has(extname(file))) {
    (await import('tsx/esm/api')).register();
    register(new URL('./typescript-hooks.js', import.meta.url));
  }
  let module: { default?: AppDefinition };
  try {
    module = (await import(url)) as { default?: AppDefinition };
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error;
    throw new UsageError(`Node cannot run ${extname(file!)} files: pass a .js, .mjs or .ts module.`);
  }
  if (!module.default?.collections) throw new UsageError(`${file} has no default export made with defineApp().`);
  const app = module.default;
  // Migrations the app passes win; otherwise they are the folder's beside it, as Django finds an app's.
  return { ...app, migrations: app.migrations ?? (file ? await loadMigrations(migrationFolder(file).path, extname(file)) : {}) };
}

/**
 * The app's OpenAPI document, from the app built but not listening. It is
 * built on a database that runs nothing and needs no driver (not even the
 * optional SQLite one), without Redis and with a throwaway key (nothing gets
 * signed): the document depends on the declarations alone.
 * Log lines go to standard error so standard output is the JSON only.
 */
async function openApiDocument(app: AppDefinition, config: Config): Promise<unknown> {
  const database = openUnconnectedDatabase();
  const buildConfig = { ...config, redisUrl: undefined, secretKey: randomBytes(32).toString('base64url') };
  const server = await buildApp(app, { database, config: buildConfig, logStream: process.stderr });
  try {
    await server.ready();
    return server.swagger();
  } finally {
    await server.close();
    await database.close();
  }
}

/** Where an app's migrations are written: beside its module, in its language; the example service's beside its source. */
function migrationFolder(file: string | undefined): MigrationFolder {
  if (!file) {
    return { path: fileURLToPath(new URL('../src/service/migrations/', import.meta.url)), extension: '.ts', importFrom: '../../framework/index.js' };
  }
  return { path: join(dirname(resolve(file)), 'migrations'), extension: extname(file), importFrom: 'restfold' };
}

/** `books.name=title` → { books: { name: 'title' } }. */
function parseRenames(given: readonly string[]): Renames {
  const renames: Record<string, Record<string, string>> = {};
  for (const text of given) {
    const match = /^(\w+)\.(\w+)=(\w+)$/.exec(text);
    if (!match) throw new UsageError(`--rename takes TABLE.OLD=NEW, not "${text}".`);
    const [, table, from, to] = match as unknown as [string, string, string, string];
    renames[table] = { ...renames[table], [from]: to };
  }
  return renames;
}

/** On a terminal, asks whether each dropped-and-added column pair is a rename; never guessed otherwise. */
async function askRenames(plan: MigrationPlan, renames: Renames): Promise<Renames> {
  if (!process.stdin.isTTY || plan.renameCandidates.length === 0) return renames;
  const terminal = createInterface({ input: process.stdin, output: process.stdout });
  const confirmed: Record<string, Record<string, string>> = { ...renames };
  try {
    for (const { table, from, to } of plan.renameCandidates) {
      if (confirmed[table]?.[from]) continue;
      const answer = await terminal.question(`Was ${table}.${from} renamed to ${table}.${to}? [y/N] `);
      if (/^y(es)?$/i.test(answer.trim())) confirmed[table] = { ...confirmed[table], [from]: to };
    }
  } finally {
    terminal.close();
  }
  return confirmed;
}

async function makeMigrations(app: LoadedApp, file: string | undefined, options: { name?: string; rename: string[]; check: boolean }): Promise<void> {
  const state = appState(app);
  const migrations = app.migrations;
  let renames = parseRenames(options.rename);
  const baseline = appBaseline(app);
  let plan = planMigration(state, migrations, renames, baseline);
  if (plan.changes.length === 0) {
    console.log('No changes.');
    return;
  }
  if (options.check) {
    console.error(`The declarations have changed without a migration:\n  ${plan.changes.join('\n  ')}\nRun "restfold makemigrations".`);
    process.exitCode = 1;
    return;
  }
  const asked = await askRenames(plan, renames);
  if (asked !== renames) plan = planMigration(state, migrations, (renames = asked), baseline);
  const folder = migrationFolder(file);
  const written = await writeMigration(folder, plan, state, { name: options.name, generatedBy: 'restfold makemigrations' });
  console.log(`Wrote ${written}:\n  ${plan.changes.join('\n  ')}`);
  for (const warning of plan.warnings) console.log(`Review: ${warning}`);
}

/** `new DIR`: the scaffold's files, then its first migration generated from them. */
async function newApp(dir: string | undefined): Promise<void> {
  if (!dir) throw new UsageError('Name the folder: restfold new DIR.');
  const written = writeNewApp(dir);
  if ('refused' in written) throw new UsageError(`${written.refused} Choose a new or empty folder.`);
  await makeMigrations(await loadApp(written.app), written.app, { rename: [], check: false });
  console.log(`A new app in ${resolve(dir)}: see its README.md to serve it.`);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** Opens the database, migrates it (`contract`: contract steps too), and runs `work` with the names of the migrations just applied. */
async function withDatabase<T>(
  config: Config,
  app: AppDefinition | undefined,
  work: (database: Database, applied: AppliedMigrations) => Promise<T>,
  contract = false,
): Promise<T> {
  const database = openConfiguredDatabase(config);
  try {
    const applied = app ? await migrateFrameworkAndApp(database, app, contract) : await migrateFramework(database, contract);
    return await work(database, applied);
  } finally {
    await database.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      app: { type: 'string' },
      username: { type: 'string' },
      password: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      email: { type: 'string' },
      superuser: { type: 'boolean' },
      staff: { type: 'boolean' },
      permission: { type: 'string', multiple: true },
      group: { type: 'string', multiple: true },
      all: { type: 'boolean' },
      name: { type: 'string' },
      rename: { type: 'string', multiple: true },
      check: { type: 'boolean' },
      contract: { type: 'boolean' },
      delete: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, subcommand] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return;
  }
  if (command === 'new') {
    await newApp(subcommand);
    return;
  }
  loadDotEnv();
  const config = loadConfig();
  const app = await loadApp(values.app);
  // The accounts' commands touch the framework's tables: given no --app, they migrate those alone, as
  // the example service's migrations have no place in the database of an app served with --app.
  const accountsApp = values.app === undefined ? undefined : app;
  const username = (): string => {
    if (!values.username) throw new UsageError('--username is required.');
    return values.username;
  };
  /** The one --group a permissions command names, if any. */
  const oneGroup = (): string | undefined => {
    if ((values.group?.length ?? 0) > 1) throw new UsageError('Name one --group.');
    return values.group?.[0];
  };

  switch (command) {
    case 'serve':
      await serveWorkers(app, config);
      return;
    case 'schema':
      console.log(JSON.stringify(await openApiDocument(app, config), null, 2));
      return;
    case 'makemigrations':
      await makeMigrations(app, values.app, { name: values.name, rename: values.rename ?? [], check: values.check ?? false });
      return;
    case 'check': {
      const database = openConfiguredDatabase(config);
      try {
        const differences = await declaredSchemaDifferences(database, app);
        if (differences.length > 0) {
          console.error(`The database differs from the declarations:\n  ${differences.join('\n  ')}`);
          process.exitCode = 1;
          return;
        }
      } finally {
        await database.close();
      }
      console.log('The database matches the declarations.');
      return;
    }
    case 'files': {
      if (subcommand !== 'sweep') throw new UsageError('Usage: restfold files sweep [--delete]');
      const remove = values.delete ?? false;
      const orphans = await withDatabase(config, app, (database) => sweepFiles(app, config, database, { remove }));
      for (const key of orphans) console.log(key);
      console.error(`${orphans.length} stored file(s) no row names${remove ? ': removed' : ' (--delete removes them)'}.`);
      return;
    }
    case 'migrate': {
      const { framework, app: own, held } = await withDatabase(config, app, async (_database, applied) => applied, values.contract ?? false);
      const lines = [
        ...(framework.length > 0 ? [`Applied the framework's migrations: ${framework.join(', ')}`] : []),
        ...(own.length > 0 ? [`Applied the app's migrations: ${own.join(', ')}`] : []),
      ];
      console.log(lines.length > 0 ? lines.join('\n') : 'Migrations are up to date.');
      if (held.length > 0) console.log(heldMessage(held));
      return;
    }
    case 'createuser': {
      if (values.password !== undefined && values['password-stdin']) {
        throw new UsageError('Give --password or --password-stdin, not both.');
      }
      const password = values['password-stdin'] ? await readStdin() : values.password;
      const id = await withDatabase(config, accountsApp, (database) =>
        createUser(database, {
          username: username(),
          password,
          email: values.email ?? '',
          superuser: values.superuser ?? false,
          staff: values.staff ?? false,
          permissions: values.permission ?? [],
          groups: values.group ?? [],
        }, app.userModel),
      );
      console.log(`Created user "${values.username}" (id ${id}).`);
      return;
    }
    case 'token': {
      if (subcommand === 'create') {
        const token = await withDatabase(config, accountsApp, async (database) =>
          createToken(database, await userNamed(database, username())),
        );
        console.log(token);
        return;
      }
      if (subcommand === 'revoke') {
        const count = await withDatabase(config, accountsApp, async (database) =>
          revokeUserTokens(database, await userNamed(database, username())),
        );
        console.log(`Revoked ${count} token(s) of "${values.username}".`);
        return;
      }
      throw new UsageError('Use "token create" or "token revoke".');
    }
    case 'permissions': {
      const names = positionals.slice(2);
      const group = oneGroup();
      if (group !== undefined && values.username !== undefined) throw new UsageError('Give --username or --group, not both.');
      if (subcommand === 'list') {
        if (names.length > 0) throw new UsageError('"permissions list" takes no names.');
        const held = await withDatabase(config, accountsApp, async (database) => {
          if (group !== undefined) return groupPermissions(database, await groupNamed(database, group));
          const id = await userNamed(database, username());
          return values.all ? effectivePermissions(database, id) : listPermissions(database, id);
        });
        for (const name of held) console.log(name);
        return;
      }
      if (subcommand === 'add' || subcommand === 'remove') {
        if (names.length === 0) throw new UsageError(`Name at least one permission to ${subcommand}.`);
        await withDatabase(config, accountsApp, async (database) => {
          if (group !== undefined) {
            const id = await groupNamed(database, group);
            if (subcommand === 'add') {
              await grantGroupPermissions(database, id, names);
              console.log(`Group "${group}" now gives: ${(await groupPermissions(database, id)).join(', ')}.`);
            } else {
              const removed = await revokeGroupPermissions(database, id, names);
              console.log(`Removed ${removed} permission(s) from group "${group}".`);
            }
            return;
          }
          const id = await userNamed(database, username());
          if (subcommand === 'add') {
            await grantPermissions(database, id, names);
            console.log(`"${values.username}" now holds: ${(await listPermissions(database, id)).join(', ')}.`);
          } else {
            const removed = await revokePermissions(database, id, names);
            console.log(`Removed ${removed} permission(s) from "${values.username}".`);
          }
        });
        return;
      }
      throw new UsageError('Use "permissions list", "permissions add" or "permissions remove".');
    }
    case 'groups': {
      const names = positionals.slice(2);
      if (subcommand === 'list') {
        if (names.length > 0) throw new UsageError('"groups list" takes no names.');
        const found = await withDatabase(config, accountsApp, async (database) =>
          values.username === undefined ? listGroups(database) : groupsOf(database, await userNamed(database, values.username)),
        );
        for (const { name } of found) console.log(name);
        return;
      }
      if (names.length === 0) throw new UsageError(`Name at least one group to ${subcommand ?? 'change'}.`);
      if (subcommand === 'create') {
        await withDatabase(config, accountsApp, async (database) => {
          for (const name of names) await createGroup(database, name, values.permission ?? []);
        });
        console.log(`Created group(s): ${names.join(', ')}.`);
        return;
      }
      if (subcommand === 'delete') {
        await withDatabase(config, accountsApp, async (database) => {
          const ids = await Promise.all(names.map((name) => groupNamed(database, name)));
          for (const id of ids) await deleteGroup(database, id);
        });
        console.log(`Deleted group(s): ${names.join(', ')}.`);
        return;
      }
      if (subcommand === 'add' || subcommand === 'remove') {
        await withDatabase(config, accountsApp, async (database) => {
          const id = await userNamed(database, username());
          if (subcommand === 'add') {
            await addToGroups(database, id, names);
            console.log(`"${values.username}" is now in: ${(await groupsOf(database, id)).map(({ name }) => name).join(', ')}.`);
          } else {
            const removed = await removeFromGroups(database, id, names);
            console.log(`Removed "${values.username}" from ${removed} group(s).`);
          }
        });
        return;
      }
      throw new UsageError('Use "groups list", "groups create", "groups delete", "groups add" or "groups remove".');
    }
    default:
      throw new UsageError(`Unknown command "${command}".`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`restfold: ${message}`);
  if (isUserMistake(error)) console.error('Run "restfold --help" for usage.');
  process.exit(isUserMistake(error) ? 2 : 1);
});
