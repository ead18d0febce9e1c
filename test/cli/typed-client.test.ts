/**
 * Typed clients, as a user would make them from the running service's
 * /api/v1/schema/, with two generators: openapi-typescript (types, called
 * through openapi-fetch) and swagger-typescript-api (a class with a method per
 * operationId). Each client file uses the results naturally (records named
 * `User`, `Article`, `created.id` a number, no casts; a list's records may be
 * narrowed by `?fields=`, so their fields are optional; a create answers one record), is type-checked
 * strictly by the TypeScript compiler, then run against the service. A
 * deliberately wrong client proves the check bites. So for an app's custom
 * action: its declared body is typed, and checked.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { generateApi } from 'swagger-typescript-api';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { Note } from '../support/owned-notes.js';
import { root, startServer, type SpawnedServer } from '../support/spawned-server.js';
import { typeCheck, wrongLines } from '../support/type-check.js';

let server: SpawnedServer;
let token: string;
let folder: string;

// Under dist/ (ignored by git, eslint and the type-check) so `openapi-fetch` resolves from node_modules.
beforeAll(async () => {
  server = await startServer();
  server.cli(['createuser', '--username', 'admin', '--password', 'admin-pass', '--superuser']);
  token = server.cli(['token', 'create', '--username', 'admin']).trim();
  mkdirSync(join(root, 'dist'), { recursive: true });
  folder = mkdtempSync(join(root, 'dist', 'typed-client-'));
  writeFileSync(join(folder, 'package.json'), '{ "type": "module" }\n');
  await generate(await (await fetch(`${server.url}/api/v1/schema/`)).json(), 'api');
}, 120_000);
afterAll(async () => {
  await server?.stop();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

const CLIENT = `
import createClient from 'openapi-fetch';
import type { components, paths } from './api-types.js';

type User = components['schemas']['User'];

export async function exercise(baseUrl: string, token: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${token}\` } });

  const created = await client.POST('/api/v1/users/', {
    body: { username: 'typed-client', email: 'typed@example.com', password: 'typed-pass-1' },
  });
  if (!created.data) throw new Error(\`create failed: \${JSON.stringify(created.error)}\`);
  // (openapi-fetch's Readable drops a property typed null, such as the hidden password, from answers.)
  const id: User['id'] = created.data.id;

  // A list's records are whole (User) unless ?fields= or ?omit= narrowed them (UserSubset).
  const listed = await client.GET('/api/v1/users/', { params: { query: { username__startswith: 'typed', ordering: '-id' } } });
  const usernames = (listed.data?.results ?? []).map((record) => record.username);
  const narrowed = await client.GET('/api/v1/users/', { params: { query: { username__startswith: 'typed', fields: 'username' } } });
  const fields = (narrowed.data?.results ?? []).map((record) => Object.keys(record));

  // The collection's POST takes one record and answers it (several: bulk/).
  const article = await client.POST('/api/v1/articles/', { body: { title: 'Typed' } });
  if (!article.data) throw new Error('article create failed');
  const articleId: number = article.data.id;
  const author: string = article.data.author.username;
  const bulk = await client.POST('/api/v1/articles/bulk/', { body: [{ title: 'Bulk one' }, { title: 'Bulk two' }] });
  const bulkTitles: string[] = (bulk.data ?? []).map((record) => record.title);
  const updated = await client.PATCH('/api/v1/users/{id}/', { params: { path: { id } }, body: { email: 'renamed@example.com', is_active: false } });
  const deleted = await client.DELETE('/api/v1/users/{id}/', { params: { path: { id } } });
  const gone = await client.GET('/api/v1/users/{id}/', { params: { path: { id } } });

  return {
    created: { status: created.response.status, username: created.data.username },
    listed: { count: listed.data?.count, usernames, fields },
    article: { positive: articleId > 0, author, bulkTitles },
    updated: { email: updated.data?.email, isActive: updated.data?.is_active },
    deleted: deleted.response.status,
    gone: { status: gone.response.status, code: gone.error?.code },
  };
}
`;

/** The same service through swagger-typescript-api's class, with DRF's Token keyword. */
const STA_CLIENT = `
import { Api, type Article, type User } from './api-sta.js';

export async function exercise(baseUrl: string, token: string) {
  const api = new Api({ baseUrl, baseApiParams: { headers: { Authorization: \`Token \${token}\` } } });

  const created = await api.articles.articlesCreate({ title: 'From another generator', body: 'text' });
  const article: Article = created.data;
  const id: number = article.id;
  const author: string = article.author.username;
  const many = await api.articles.articlesBulkCreate([{ title: 'From another generator, 2' }, { title: 'From another generator, 3' }]);
  const titles: string[] = many.data.map((article) => article.title);

  const listed = await api.articles.articlesList({ ordering: '-id', title__startswith: 'From another' });
  const renamed = await api.articles.articlesPartialUpdate(id, { title: 'Renamed by another generator' });
  const users = await api.users.usersList({ ordering: '-id' });
  const usernames = users.data.results.map((user) => user.username);
  const me = await api.users.usersPartialUpdate(users.data.results[0]?.id ?? 0, { is_active: true });
  const whole: User = me.data;
  await api.articles.articlesDestroy(id);
  const gone = await api.articles.articlesRetrieve(id).catch((response: Response) => response.status);

  return { id: id > 0, author, titles, listed: listed.data.results.map((article) => article.title), renamed: renamed.data.title, usernames, active: whole.is_active, gone };
}
`;

/** One mistake a line, each of which the generated types must reject. */
const WRONG_CLIENT = `
import createClient from 'openapi-fetch';
import type { paths } from './api-types.js';
const client = createClient<paths>({ baseUrl: 'http://127.0.0.1' });
await client.GET('/api/v1/userz/');
await client.POST('/api/v1/users/', { body: { email: 'no-username-or-password@example.com' } });
await client.PATCH('/api/v1/users/{id}/', { params: { path: { id: 1 } }, body: { is_active: 'yes' } });
await client.DELETE('/api/v1/users/{id}/', { params: { path: { id: 'one' } } });
await client.GET('/api/v1/users/', { params: { query: { is_active: 'maybe' } } });
export const name: number = (await client.GET('/api/v1/users/{id}/', { params: { path: { id: 1 } } })).data!.username!;
`;

/** Both generators' files for `document`, named `<name>-types.ts` (openapi-typescript) and `<name>-sta.ts`. */
async function generate(document: unknown, name: string): Promise<void> {
  writeFileSync(join(folder, `${name}-types.ts`), astToString(await openapiTS(document as Parameters<typeof openapiTS>[0])));
  const { files } = await generateApi({ spec: document as Extract<Parameters<typeof generateApi>[0], { spec: unknown }>['spec'], output: false, fileName: `${name}-sta.ts`, httpClientType: 'fetch', moduleNameFirstTag: true, silent: true });
  writeFileSync(join(folder, `${name}-sta.ts`), files[0]!.fileContent);
}

/** A client module: it exercises the service at a URL with a token, and returns what it saw. */
interface Exercise {
  exercise(url: string, token: string): Promise<unknown>;
}

/** `source` written as `<name>.ts` and `<name>.js` (with `also`, already written, as JavaScript beside it), then imported. */
async function load(name: string, source: string, also: readonly string[] = []): Promise<Exercise> {
  for (const [file, text] of [[name, source], ...also.map((other) => [other, readFileSync(join(folder, `${other}.ts`), 'utf8')])] as const) {
    writeFileSync(join(folder, `${file}.js`), ts.transpileModule(text, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
  }
  return (await import(pathToFileURL(join(folder, `${name}.js`)).href)) as Exercise;
}

describe('a client generated from /api/v1/schema/', () => {
  it('type-checks strictly, then lists, creates, updates and deletes users on the running service', async () => {
    const file = join(folder, 'client.ts');
    writeFileSync(file, CLIENT);
    expect(typeCheck(file).messages).toEqual([]);

    const client = await load('client', CLIENT);
    expect(await client.exercise(server.url, token)).toEqual({
      created: { status: 201, username: 'typed-client' },
      listed: { count: 1, usernames: ['typed-client'], fields: [['username']] },
      article: { positive: true, author: 'admin', bulkTitles: ['Bulk one', 'Bulk two'] },
      updated: { email: 'renamed@example.com', isActive: false },
      deleted: 204,
      gone: { status: 404, code: 'not_found' },
    });
  }, 120_000);

  it('works the same through a second generator (swagger-typescript-api), named by operationId', async () => {
    const file = join(folder, 'sta-client.ts');
    writeFileSync(file, STA_CLIENT);
    expect(typeCheck(file).messages).toEqual([]);

    const client = await load('sta-client', STA_CLIENT, ['api-sta']);
    expect(await client.exercise(server.url, token)).toEqual({
      id: true,
      author: 'admin',
      titles: ['From another generator, 2', 'From another generator, 3'],
      listed: ['From another generator, 3', 'From another generator, 2', 'From another generator'],
      renamed: 'Renamed by another generator',
      usernames: ['admin'],
      active: true,
      gone: 404,
    });
  }, 120_000);

  it('rejects a client that calls it wrongly, on every wrong line', () => {
    const { refused, meant, messages } = wrongLines(folder, WRONG_CLIENT);
    expect(meant).toHaveLength(6);
    expect(refused, messages.join('\n')).toEqual(meant);
  }, 120_000);
});

/** An app's custom actions: one with a body of its own fields, one taking any JSON. */
const notesApp = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('notes', {
        serializer: serializer(Note, { fields: ['id', 'text'] }),
        scope: ({ user }) => ({ owner_id: user?.id ?? null }),
        actions: {
          publish: {
            detail: true,
            method: 'POST',
            body: { channel: fields.string({ maxLength: 20 }), urgent: fields.boolean({ default: false }) },
            response: { type: 'object', required: ['channel', 'urgent'], properties: { channel: { type: 'string' }, urgent: { type: 'boolean' } } },
            handler: ({ body }) => body,
          },
          echo: { detail: false, method: 'POST', response: { type: 'object', properties: { echoed: {} } }, handler: ({ body }) => ({ echoed: body }) },
        },
      }),
    ],
  }),
);

const NOTES_CLIENT = `
import createClient from 'openapi-fetch';
import type { components, paths } from './notes-types.js';
import { Api } from './notes-sta.js';

export async function exercise(baseUrl: string, token: string) {
  const headers = { Authorization: \`Bearer \${token}\` };
  const client = createClient<paths>({ baseUrl, headers });
  const note = await client.POST('/api/v1/notes/', { body: { text: 'to publish' } });
  if (!note.data) throw new Error('note create failed');
  const path = { params: { path: { id: note.data.id } } };
  const body: components['schemas']['NotesPublishBody'] = { channel: 'news' };
  const published = await client.POST('/api/v1/notes/{id}/publish/', { ...path, body });
  const refused = await client.POST('/api/v1/notes/{id}/publish/', { ...path, body: { channel: 'x'.repeat(21) } });
  const echoed = await client.POST('/api/v1/notes/echo/', { body: [1, 'two'] });

  const api = new Api({ baseUrl, baseApiParams: { headers } });
  const urgent = await api.notes.notesPublish(note.data.id, { channel: 'alerts', urgent: true });
  return { published: published.data, refused: refused.error?.code, echoed: echoed.data, urgent: urgent.data };
}
`;

/** One mistake a line, each of which the declared body's types must reject. */
const NOTES_WRONG_CLIENT = `
import createClient from 'openapi-fetch';
import type { paths } from './notes-types.js';
import { Api } from './notes-sta.js';
const client = createClient<paths>({ baseUrl: 'http://127.0.0.1' });
const api = new Api({ baseUrl: 'http://127.0.0.1' });
await client.POST('/api/v1/notes/{id}/publish/', { params: { path: { id: 1 } }, body: { urgent: true } });
await client.POST('/api/v1/notes/{id}/publish/', { params: { path: { id: 1 } }, body: { channel: 5 } });
await api.notes.notesPublish(1, { urgent: true });
await api.notes.notesPublish(1, { urgent: 'yes', channel: 'news' });
`;

describe('a custom action’s declared body, through generated clients', () => {
  let notes: TestApi;
  let notesUrl: string;
  let notesToken: string;
  beforeAll(async () => {
    notes = await startApi({}, notesApp);
    notesUrl = `http://127.0.0.1:${await notes.listen()}`;
    notesToken = (await notes.user('writer')).token;
    await generate((await notes.request('GET', '/api/v1/schema/')).json, 'notes');
  }, 120_000);
  afterAll(() => notes?.close());

  it('is typed (not never): a client sends it and reads the answer, strictly type-checked', async () => {
    const file = join(folder, 'notes-client.ts');
    writeFileSync(file, NOTES_CLIENT);
    expect(typeCheck(file).messages).toEqual([]);
    const client = await load('notes-client', NOTES_CLIENT, ['notes-sta']);
    expect(await client.exercise(notesUrl, notesToken)).toEqual({
      published: { channel: 'news', urgent: false },
      refused: 'validation_failed',
      echoed: { echoed: [1, 'two'] },
      urgent: { channel: 'alerts', urgent: true },
    });
  }, 120_000);

  it('rejects a body the declaration does not allow, on every wrong line', () => {
    const file = join(folder, 'notes-wrong.ts');
    writeFileSync(file, NOTES_WRONG_CLIENT);
    const { lines, messages } = typeCheck(file);
    const wrongLines = NOTES_WRONG_CLIENT.split('\n').flatMap((line, index) => (line.startsWith('await') ? [index + 1] : []));
    expect(wrongLines).toHaveLength(4);
    expect(lines.sort((a, b) => a - b), messages.join('\n')).toEqual(wrongLines);
  }, 120_000);
});
