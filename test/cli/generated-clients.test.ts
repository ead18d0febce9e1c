/**
 * Clients a TypeScript user generates from the example service's /api/v1/schema/ with today's common
 * generators, used unchanged: hey-api (@hey-api/openapi-ts, its fetch client) and orval (its fetch
 * client). Each is generated offline into a temporary folder; a short usage script lists, creates,
 * patches and deletes articles with the credential given the generator's standard way (hey-api's
 * `auth: () => token`, which sends `Bearer` for an http/bearer scheme; orval's per-call RequestInit),
 * reads the records as the types say (a create answers one `Article`, its fields required), passes
 * `tsc --strict --noEmit`, and runs (through tsx) against a live server.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@hey-api/openapi-ts';
import { generate } from 'orval';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, startServer, type SpawnedServer } from '../support/spawned-server.js';
import { typeCheck, wrongLines } from '../support/type-check.js';

let server: SpawnedServer;
let token: string;
let folder: string;

beforeAll(async () => {
  server = await startServer();
  server.cli(['createuser', '--username', 'admin', '--password', 'admin-pass', '--superuser']);
  token = server.cli(['token', 'create', '--username', 'admin']).trim();
  folder = mkdtempSync(join(tmpdir(), 'restfold-generated-clients-'));
  writeFileSync(join(folder, 'package.json'), '{ "type": "module" }\n');
  const document = (await (await fetch(`${server.url}/api/v1/schema/`)).json()) as Record<string, unknown>;
  writeFileSync(join(folder, 'openapi.json'), JSON.stringify(document));
  await createClient({ input: join(folder, 'openapi.json'), output: join(folder, 'hey'), plugins: ['@hey-api/client-fetch'], logs: { level: 'silent' } });
  await generate({ input: { target: join(folder, 'openapi.json') }, output: { target: join(folder, 'orval', 'api.ts'), client: 'fetch', mode: 'single', baseUrl: server.url } });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

const HEY_USAGE = `
import { client } from './hey/client.gen.js';
import { articlesCreate, articlesDestroy, articlesList, articlesPartialUpdate, articlesRetrieve, type Article, type ArticleEvent } from './hey/index.js';

export async function exercise(baseUrl: string, token: string) {
  client.setConfig({ baseUrl, auth: () => token });

  const created = await articlesCreate({ body: { title: 'From hey-api', body: 'text' }, throwOnError: true });
  const article: Article = created.data;
  const id: number = article.id;
  const author: string = article.author.username;

  const listed = await articlesList({ query: { ordering: '-id', title__startswith: 'From hey-api' }, throwOnError: true });
  const titles = listed.data.results.map((record) => record.title);

  const patched = await articlesPartialUpdate({ path: { id }, body: { title: 'From hey-api, renamed' }, throwOnError: true });
  const title: string = patched.data.title;

  const deleted = await articlesDestroy({ path: { id } });
  const gone = await articlesRetrieve({ path: { id } });

  // A live stream's events, typed by name: a deleted one carries the record's id alone.
  const described = (event: ArticleEvent): string => (event.event === 'deleted' ? \`deleted \${event.data.id}\` : event.event);
  return { author, titles, title, deleted: deleted.response.status, gone: [gone.response.status, gone.error?.code], event: described({ event: 'deleted', id: 'x', data: { id } }) === \`deleted \${id}\` };
}
`;

const ORVAL_USAGE = `
import { articlesCreate, articlesDestroy, articlesList, articlesPartialUpdate, articlesRetrieve, type Article } from './orval/api.js';

export async function exercise(_baseUrl: string, token: string) {
  const auth: RequestInit = { headers: { Authorization: \`Bearer \${token}\` } };

  const created = await articlesCreate({ title: 'From orval', body: 'text' }, auth);
  if (created.status !== 201) throw new Error(\`create: \${created.status} \${created.data.code}\`);
  const article: Article = created.data;
  const id: number = article.id;
  const author: string = article.author.username;

  const listed = await articlesList({ ordering: '-id', title__startswith: 'From orval' }, auth);
  if (listed.status !== 200) throw new Error(\`list: \${listed.status}\`);
  const titles = listed.data.results.map((record) => record.title);

  const patched = await articlesPartialUpdate(id, { title: 'From orval, renamed' }, auth);
  if (patched.status !== 200) throw new Error(\`patch: \${patched.status}\`);
  const title: string = patched.data.title;

  const deleted = await articlesDestroy(id, auth);
  const gone = await articlesRetrieve(id, undefined, auth);
  return { author, titles, title, deleted: deleted.status, gone: [gone.status, gone.status === 404 ? gone.data.code : undefined] };
}
`;

/** One mistake a line, each of which the generated types must reject. */
const WRONG_USAGE = `
import { articlesCreate } from './hey/index.js';
import { articlesCreate as orvalCreate } from './orval/api.js';
const created = await articlesCreate({ body: { title: 'One' }, throwOnError: true });
const orvalCreated = await orvalCreate({ title: 'One' });
await articlesCreate({ body: [{ title: 'Several: bulk/ takes them' }] });
export const several = created.data.map((article) => article.id);
export const title: number = created.data.title;
export const body: string = orvalCreated.status === 201 ? orvalCreated.data.author.id : '';
`;

/** Writes `source` as `<name>.ts` beside the generated clients, type-checks it, then runs its `exercise` through tsx. */
function run(name: string, source: string): unknown {
  const file = join(folder, `${name}.ts`);
  writeFileSync(file, source);
  expect(typeCheck(file).messages).toEqual([]);
  const main = `import { exercise } from './${name}.ts';\nconsole.log(JSON.stringify(await exercise(process.argv[2], process.argv[3])));\n`;
  writeFileSync(join(folder, `${name}-main.mjs`), main);
  const ran = spawnSync(join(root, 'node_modules', '.bin', 'tsx'), [join(folder, `${name}-main.mjs`), server.url, token], { encoding: 'utf8', timeout: 30_000 });
  expect(ran.status, ran.stderr).toBe(0);
  return JSON.parse(ran.stdout);
}

describe('clients generated from the example service’s document, used unchanged', () => {
  it('hey-api: compiles strictly with auth: () => token, then lists, creates, patches and deletes', () => {
    expect(run('hey-usage', HEY_USAGE)).toEqual({
      author: 'admin',
      titles: ['From hey-api'],
      title: 'From hey-api, renamed',
      deleted: 204,
      gone: [404, 'not_found'],
      event: true,
    });
  }, 60_000);

  it('orval: compiles strictly with the credential in each call, then lists, creates, patches and deletes', () => {
    expect(run('orval-usage', ORVAL_USAGE)).toEqual({ author: 'admin', titles: ['From orval'], title: 'From orval, renamed', deleted: 204, gone: [404, 'not_found'] });
  }, 60_000);

  it('types a create as answering one record, and refuses the array form there, on every wrong line', () => {
    const { refused, meant, messages } = wrongLines(folder, WRONG_USAGE);
    expect(meant).toHaveLength(4);
    expect(refused, messages.join('\n')).toEqual(meant);
  }, 60_000);
});
