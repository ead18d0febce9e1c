/**
 * API versioning (issue 46, DRF's versioning classes): an app declares how clients name a version
 * (the URL path, a parameter of the Accept header's media type, a query parameter) and which
 * exist; the request's version reaches serializers (fields per version, in answers and bodies),
 * permissions, hooks and custom actions; an unknown version gets DRF's answer (404, or 406 in
 * the Accept header); records' links keep the version; each version has its OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, computed, defineApp, fields, model, serializer, type Permission, type VersionsDeclaration } from '../../src/framework/index.js';
import { mountedRouters } from '../../src/framework/routing/routers.js';
import { versioningOf } from '../../src/framework/stages/versioning.js';
import { startApi, type TestApi } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { lintProblems } from '../support/openapi-lint.js';

const Note = model('versioned_notes', {
  id: fields.id(),
  title: fields.string({ maxLength: 100 }),
  summary: fields.string({ maxLength: 100, nullable: true }),
});

/** Version 1 shows no summary; version 2 (and any other) all the fields. */
const notes = serializer(Note, { fields: ['id', 'url', 'title', 'summary'], computed: { url: computed.url() }, versions: { '1': ['id', 'url', 'title'] } });

const Reply = model('versioned_replies', {
  id: fields.id(),
  text: fields.string({ maxLength: 100 }),
  note_id: fields.foreignKey('versioned_notes'),
});

/** A reply shows its note nested, whose own serializer shows version 1 no summary. */
const replies = serializer(Reply, {
  fields: ['id', 'text', 'note_id', 'note'],
  nested: { note: { source: 'note_id', serializer: serializer(Note, { name: 'ReplyNote', fields: ['id', 'title', 'summary'], versions: { '1': ['id', 'title'] } }) } },
});

/** What the permission, the hook and the custom action saw of the request's version. */
const seen: string[] = [];
const noting: Permission = {
  description: 'Anyone (noting the version)',
  hasPermission: ({ version }) => {
    seen.push(`permission ${version}`);
    return true;
  },
};

const app = (versions: VersionsDeclaration) =>
  withGeneratedMigrations(
    defineApp({
      versions,
      collections: [
        collection('notes', {
          serializer: notes,
          permissions: [noting],
          pageSize: 1,
          defaultOrdering: ['id'],
          hooks: {
            beforeCreate: ({ version }) => {
              seen.push(`hook ${version}`);
            },
          },
          actions: { version: { detail: false, method: 'GET', handler: ({ version }) => ({ version }) } },
        }),
        collection('replies', { serializer: replies, permissions: [noting] }),
      ],
    }),
  );

const path = (url: string) => new URL(url).pathname + new URL(url).search;

/** The documented record of `version`'s document: its properties. */
const documentedFields = (document: { components: { schemas: Record<string, { properties: object }> } }) => Object.keys(document.components.schemas.VersionedNote!.properties);

describe('the path scheme (DRF URLPathVersioning)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi({}, app({ scheme: 'path', allowed: ['1', '2'] }));
  });
  afterAll(() => api.close());

  it('serves each version under its own prefix, with its fields in answers and bodies', async () => {
    seen.length = 0;
    const created = await api.request('POST', '/api/v2/notes/', { body: { title: 'first', summary: 'one' } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ title: 'first', summary: 'one' });
    expect(path(created.json.url)).toBe(`/api/v2/notes/${created.json.id}/`);
    expect(seen).toEqual(['permission 2', 'hook 2']);

    const refused = await api.request('POST', '/api/v1/notes/', { body: { title: 'second', summary: 'two' } });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ code: 'validation_failed', details: { summary: ['Unknown field.'] } });
    expect((await api.request('POST', '/api/v1/notes/', { body: { title: 'second' } })).status).toBe(201);

    const v1 = await api.request('GET', `/api/v1/notes/${created.json.id}/`);
    expect(v1.json).toEqual({ id: created.json.id, url: expect.stringContaining(`/api/v1/notes/${created.json.id}/`), title: 'first' });
    const page = await api.request('GET', '/api/v2/notes/');
    expect(page.json.results[0]).toMatchObject({ title: 'first', summary: 'one' });
    expect(path(page.json.next)).toBe('/api/v2/notes/?page=2');
    expect(path((await api.request('GET', '/api/v2/')).json.notes)).toBe('/api/v2/notes/');
  });

  it('renders a nested record with its own serializer\'s fields for the version, and documents them so', async () => {
    const note = (await api.request('POST', '/api/v2/notes/', { body: { title: 'nested', summary: 'inside' } })).json;
    const created = await api.request('POST', '/api/v1/replies/', { body: { text: 'a reply', note_id: note.id } });
    expect(created.json.note).toEqual({ id: note.id, title: 'nested' });
    const url = `/api/v2/replies/${created.json.id}/`;
    expect((await api.request('GET', url)).json.note).toEqual({ id: note.id, title: 'nested', summary: 'inside' });
    expect((await api.request('GET', '/api/v1/replies/')).json.results[0].note).toEqual({ id: note.id, title: 'nested' });
    expect((await api.request('GET', `${url}?fields=note.summary`)).json).toEqual({ note: { summary: 'inside' } });
    expect((await api.request('GET', `/api/v1/replies/${created.json.id}/?fields=note.summary`)).status).toBe(400);
    const nestedFields = async (version: string) => {
      const { components } = (await api.request('GET', `/api/v${version}/schema/`)).json;
      return Object.keys(components.schemas.ReplyNote.properties);
    };
    expect(await nestedFields('1')).toEqual(['id', 'title']);
    expect(await nestedFields('2')).toEqual(['id', 'title', 'summary']);
  });

  it('answers a version it does not have with 404, in the API\'s error shape', async () => {
    for (const url of ['/api/v3/notes/', '/api/v3/', '/api/vx/notes/1/']) {
      const answer = await api.request('GET', url);
      expect(answer.status, url).toBe(404);
      expect(answer.json, url).toEqual({ error: 'Invalid version in URL path.', code: 'not_found' });
    }
    // A known version's path that nothing answers is the router's own 404.
    expect((await api.request('GET', '/api/v1/nothing/')).json).toMatchObject({ code: 'not_found', error: 'Not found.' });
  });

  it('gives the version to a custom action', async () => {
    expect((await api.request('GET', '/api/v2/notes/version/')).json).toEqual({ version: '2' });
    expect((await api.request('GET', '/api/v1/notes/version/')).json).toEqual({ version: '1' });
  });

  it('has an OpenAPI document per version, at each version\'s schema path', async () => {
    const v1 = (await api.request('GET', '/api/v1/schema/')).json;
    const v2 = (await api.request('GET', '/api/v2/schema/')).json;
    expect([v1.info.version, v2.info.version]).toEqual(['1', '2']);
    const under = (document: { paths: object }) => Object.keys(document.paths).filter((url) => url.startsWith('/api/'));
    expect(under(v1)).toContain('/api/v1/notes/');
    expect(under(v1).every((url) => url.startsWith('/api/v1/'))).toBe(true);
    expect(under(v2)).toEqual(under(v1).map((url) => url.replace('/api/v1/', '/api/v2/')));
    expect(documentedFields(v1)).not.toContain('summary');
    expect(documentedFields(v2)).toContain('summary');
    for (const document of [v1, v2]) expect(await lintProblems(document)).toEqual([]);
    const initializer = await api.request('GET', '/api/docs/static/swagger-initializer.js');
    expect(initializer.body).toContain('"2":{"url":"/api/v2/schema/"}');
  });
});

describe('the Accept header scheme (DRF AcceptHeaderVersioning)', () => {
  let api: TestApi;
  const accept = (version: string) => ({ headers: { accept: `application/json; version=${version}` } });
  beforeAll(async () => {
    api = await startApi({}, app({ scheme: 'accept', allowed: ['1', '2'], default: '1' }));
  });
  afterAll(() => api.close());

  it('reads the version from the media type, the default when it names none', async () => {
    seen.length = 0;
    const created = await api.request('POST', '/api/v1/notes/', { ...accept('2'), body: { title: 'first', summary: 'one' } });
    expect(created.json).toMatchObject({ title: 'first', summary: 'one' });
    expect(seen).toEqual(['permission 2', 'hook 2']);
    const plain = await api.request('GET', `/api/v1/notes/${created.json.id}/`);
    expect(plain.json).not.toHaveProperty('summary');
    expect(path(plain.json.url)).toBe(`/api/v1/notes/${created.json.id}/`);
    expect((await api.request('GET', `/api/v1/notes/${created.json.id}/`, accept('2'))).json.summary).toBe('one');
    expect((await api.request('GET', '/api/v1/notes/version/', accept('2'))).json).toEqual({ version: '2' });
    expect((await api.request('GET', '/api/v1/notes/version/')).json).toEqual({ version: '1' });
  });

  it('answers a version it does not have with 406', async () => {
    const answer = await api.request('GET', '/api/v1/notes/', accept('3'));
    expect(answer.status).toBe(406);
    expect(answer.json).toEqual({ error: 'Invalid version in "Accept" header.', code: 'not_acceptable' });
  });

  it('answers the schema path with the version\'s document', async () => {
    expect(documentedFields((await api.request('GET', '/api/v1/schema/')).json)).not.toContain('summary');
    const v2 = (await api.request('GET', '/api/v1/schema/', accept('2'))).json;
    expect(v2.info.version).toBe('2');
    expect(documentedFields(v2)).toContain('summary');
    expect(await lintProblems(v2)).toEqual([]);
  });
});

describe('the query parameter scheme (DRF QueryParameterVersioning)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi({}, app({ scheme: 'query', allowed: ['1', '2'], param: 'v' }));
  });
  afterAll(() => api.close());

  it('reads the version from the query string, and its links keep it', async () => {
    seen.length = 0;
    const created = await api.request('POST', '/api/v1/notes/?v=2', { body: { title: 'first', summary: 'one' } });
    expect(created.json).toMatchObject({ title: 'first', summary: 'one' });
    expect(path(created.json.url)).toBe(`/api/v1/notes/${created.json.id}/?v=2`);
    expect(created.headers.location).toBe(created.json.url);
    expect(seen).toEqual(['permission 2', 'hook 2']);
    await api.request('POST', '/api/v1/notes/?v=1', { body: { title: 'second' } });
    const page = await api.request('GET', '/api/v1/notes/?v=1');
    expect(page.json.results[0]).toEqual({ id: created.json.id, url: expect.stringMatching(/\?v=1$/), title: 'first' });
    expect(path(page.json.next)).toBe('/api/v1/notes/?v=1&page=2');
    expect((await api.request('GET', '/api/v1/notes/version/?v=2')).json).toEqual({ version: '2' });
  });

  it('answers a version it does not have, or none without a default, with 404', async () => {
    for (const url of ['/api/v1/notes/?v=3', '/api/v1/notes/']) {
      const answer = await api.request('GET', url);
      expect(answer.status, url).toBe(404);
      expect(answer.json, url).toEqual({ error: 'Invalid version in query parameter.', code: 'not_found' });
    }
  });

  it('answers the schema path with the version\'s document', async () => {
    expect(documentedFields((await api.request('GET', '/api/v1/schema/?v=1')).json)).not.toContain('summary');
    const v2 = (await api.request('GET', '/api/v1/schema/?v=2')).json;
    expect(documentedFields(v2)).toContain('summary');
    expect(await lintProblems(v2)).toEqual([]);
    // The docs UI (/api/docs/?version=2) loads a version's document, "Try it out" naming it.
    expect((await api.request('GET', '/api/docs/')).status).toBe(200);
    expect((await api.request('GET', '/api/docs/static/swagger-initializer.js')).body).toContain('"2":{"query":"v=2"}');
  });
});

describe('declaring versions', () => {
  const declared = (versions: VersionsDeclaration | undefined, routers?: { prefix: string }[]) => () =>
    defineApp({ versions, routers, collections: [collection('notes', { serializer: notes })] });

  it('refuses at start-up what cannot hold', () => {
    expect(declared(undefined)).toThrow('a serializer\'s versions name "1", which is not among the app\'s versions');
    expect(declared({ scheme: 'query', allowed: ['2'] })).toThrow('not among the app\'s versions');
    const nestedOnly = () => defineApp({ versions: { scheme: 'query', allowed: ['2'] }, collections: [collection('replies', { serializer: replies })] });
    expect(nestedOnly).toThrow('replies: a serializer\'s versions name "1", which is not among the app\'s versions');
    expect(declared({ scheme: 'query', allowed: [] })).toThrow('name at least one allowed version');
    expect(declared({ scheme: 'query', allowed: ['1', '2'], default: '3' })).toThrow('the default "3" is not among the allowed versions');
    expect(declared({ scheme: 'query', allowed: ['1', '2/'] })).toThrow('"2/" is not a version');
    expect(() => serializer(Note, { fields: ['id', 'title'], versions: { '1': ['summary'] } })).toThrow('version "1" shows summary, which are not among its fields');
  });

  it('refuses a router prefix that does not fit the scheme', () => {
    expect(() => mountedRouters([{ prefix: '/api' }], [], versioningOf({ scheme: 'path', allowed: ['1'] }))).toThrow('must hold {version} once');
    expect(() => mountedRouters([{ prefix: '/api/v{version}' }], [], versioningOf({ scheme: 'query', allowed: ['1'] }))).toThrow("only the versions' path scheme fills in");
    expect(mountedRouters(undefined, [], versioningOf({ scheme: 'path', allowed: ['1', '2'] })).map(({ prefix }) => prefix)).toEqual(['/api/v1', '/api/v2']);
  });
});
