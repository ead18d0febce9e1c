/**
 * Typed clients, as a user would make them from the running service's
 * /api/v1/schema/, with two generators: openapi-typescript (types, called
 * through openapi-fetch) and swagger-typescript-api (a class with a method per
 * operationId). Each client file uses the results naturally (`user.username`
 * is a string, `created.id` a number, no casts), is type-checked strictly by
 * the TypeScript compiler, then run against the service. A deliberately wrong
 * client proves the check bites.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { generateApi } from 'swagger-typescript-api';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, startServer, type SpawnedServer } from '../support/spawned-server.js';

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
  const schema = await (await fetch(`${server.url}/api/v1/schema/`)).json();
  writeFileSync(join(folder, 'api-types.ts'), astToString(await openapiTS(schema)));
  const { files } = await generateApi({ spec: schema, output: false, fileName: 'sta-api.ts', httpClientType: 'fetch', moduleNameFirstTag: true, silent: true });
  writeFileSync(join(folder, 'sta-api.ts'), files[0]!.fileContent);
}, 120_000);
afterAll(async () => {
  await server?.stop();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

const CLIENT = `
import createClient from 'openapi-fetch';
import type { paths } from './api-types.js';

export async function exercise(baseUrl: string, token: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${token}\` } });

  const created = await client.POST('/api/v1/users/', {
    body: { username: 'typed-client', email: 'typed@example.com', password: 'typed-pass-1' },
  });
  if (!created.data) throw new Error(\`create failed: \${JSON.stringify(created.error)}\`);
  const id: number = created.data.id;

  const listed = await client.GET('/api/v1/users/', { params: { query: { username__startswith: 'typed', ordering: '-id' } } });
  const usernames: string[] = [];
  for (const user of listed.data?.results ?? []) usernames.push(user.username);

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
    listed: { count: listed.data?.count, usernames },
    article: { positive: articleId > 0, author, bulkTitles },
    updated: { email: updated.data?.email, isActive: updated.data?.is_active },
    deleted: deleted.response.status,
    gone: { status: gone.response.status, code: gone.error?.code },
  };
}
`;

/** The same service through swagger-typescript-api's class, with DRF's Token keyword. */
const STA_CLIENT = `
import { Api } from './sta-api.js';

export async function exercise(baseUrl: string, token: string) {
  const api = new Api({ baseUrl, baseApiParams: { headers: { Authorization: \`Token \${token}\` } } });

  const created = await api.articles.articlesCreate({ title: 'From another generator', body: 'text' });
  const id: number = created.data.id;
  const author: string = created.data.author.username;
  const many = await api.articles.articlesBulkCreate([{ title: 'From another generator, 2' }, { title: 'From another generator, 3' }]);
  const titles: string[] = many.data.map((article) => article.title);

  const listed = await api.articles.articlesList({ ordering: '-id', title__startswith: 'From another' });
  const renamed = await api.articles.articlesPartialUpdate(id, { title: 'Renamed by another generator' });
  const users = await api.users.usersList({ ordering: '-id' });
  const usernames: string[] = users.data.results.map((user) => user.username);
  await api.articles.articlesDestroy(id);
  const gone = await api.articles.articlesRetrieve(id).catch((response: Response) => response.status);

  return { id: id > 0, author, titles, listed: listed.data.results.map((article) => article.title), renamed: renamed.data.title, usernames, gone };
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

/** The strict type-check a user's build would run; returns the lines (1-based) with errors, and the messages. */
function typeCheck(file: string): { lines: number[]; messages: string[] } {
  const program = ts.createProgram([file], {
    strict: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: [],
  });
  const diagnostics = ts.getPreEmitDiagnostics(program);
  return {
    lines: [...new Set(diagnostics.map((d) => (d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0)))],
    messages: diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
  };
}

describe('a client generated from /api/v1/schema/', () => {
  it('type-checks strictly, then lists, creates, updates and deletes users on the running service', async () => {
    const file = join(folder, 'client.ts');
    writeFileSync(file, CLIENT);
    expect(typeCheck(file).messages).toEqual([]);

    writeFileSync(join(folder, 'client.js'), ts.transpileModule(CLIENT, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
    const client = (await import(pathToFileURL(join(folder, 'client.js')).href)) as { exercise(url: string, token: string): Promise<unknown> };
    expect(await client.exercise(server.url, token)).toEqual({
      created: { status: 201, username: 'typed-client' },
      listed: { count: 1, usernames: ['typed-client'] },
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

    for (const name of ['sta-api', 'sta-client']) {
      const source = name === 'sta-client' ? STA_CLIENT : readFileSync(join(folder, 'sta-api.ts'), 'utf8');
      writeFileSync(join(folder, `${name}.js`), ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
    }
    const client = (await import(pathToFileURL(join(folder, 'sta-client.js')).href)) as { exercise(url: string, token: string): Promise<unknown> };
    expect(await client.exercise(server.url, token)).toEqual({
      id: true,
      author: 'admin',
      titles: ['From another generator, 2', 'From another generator, 3'],
      listed: ['From another generator, 3', 'From another generator, 2', 'From another generator'],
      renamed: 'Renamed by another generator',
      usernames: ['admin'],
      gone: 404,
    });
  }, 120_000);

  it('rejects a client that calls it wrongly, on every wrong line', () => {
    const file = join(folder, 'wrong.ts');
    writeFileSync(file, WRONG_CLIENT);
    const { lines, messages } = typeCheck(file);
    const wrongLines = WRONG_CLIENT.split('\n').flatMap((line, index) => (line.startsWith('await') || line.startsWith('export') ? [index + 1] : []));
    expect(wrongLines).toHaveLength(6);
    expect(lines.sort((a, b) => a - b), messages.join('\n')).toEqual(wrongLines);
  }, 120_000);
});
