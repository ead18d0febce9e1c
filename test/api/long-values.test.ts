/**
 * Every value a field accepts is stored, on SQLite and PostgreSQL alike: text far past a B-tree
 * entry's bound (PostgreSQL's is about 2.7 KB) is created, changed, filtered with `exact` and
 * ordered by, through the indexes its filter and ordering fields get unasked; a JSON value nested
 * past the documented depth is a 400 naming the field; and a record holding a deeper one, stored
 * before that limit existed, renders as JSON and on the browsable page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const notes = model('notes', {
  id: fields.id(),
  title: fields.string({ maxLength: 200 }),
  body: fields.text({ nullable: true }),
  summary: fields.string({ maxLength: 5000, nullable: true }),
  data: fields.json({ nullable: true }),
});
const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('notes', {
        serializer: serializer(notes, { fields: ['id', 'title', 'body', 'summary', 'data'], readOnly: ['id'] }),
        filterFields: { title: ['exact'], body: ['exact', 'in', 'icontains'], summary: ['exact'], data: ['has_key', 'isnull'] },
        orderingFields: ['title', 'body', 'summary'],
      }),
      // As the example service's (SPEC): every string filter value at most 200 characters.
      collection('capped', {
        serializer: serializer(notes, { name: 'Capped', fields: ['id', 'title', 'body', 'summary'], readOnly: ['id'] }),
        filterFields: { body: ['exact'], summary: ['exact'] },
        maxFilterLength: 200,
      }),
    ],
  }),
);

let api: TestApi;
let alice: TestUser;

const request = (method: string, url: string, body?: unknown, headers?: Record<string, string>) => api.request(method, url, { token: alice.token, body, headers });

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Letters and digits that do not compress (an index entry is compressed before its bound is checked), and need no escaping in a URL. */
function incompressible(length: number, seed: number): string {
  let state = seed;
  const text: string[] = [];
  while (text.length < length) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    text.push(ALPHABET[(state >> 8) % ALPHABET.length]!);
  }
  return text.join('');
}

beforeAll(async () => {
  api = await startApi({}, app);
  alice = await api.user('alice', { superuser: true });
});
afterAll(() => api.close());

const ids = (reply: { status: number; body: string; json: { results: { id: number }[] } }) => {
  expect(reply.status, reply.body.slice(0, 300)).toBe(200);
  return reply.json.results.map((note) => note.id);
};

describe('long text', () => {
  // A filter value is at most 200 characters (docs/query-language.md): the long values are found
  // by ordering, and an exact filter among them finds the short one, never a long one by its prefix.
  const values = { a: incompressible(3000, 1), b: incompressible(100_000, 2), c: incompressible(3000, 3), d: incompressible(100_000, 4), e: incompressible(5000, 5) };

  it('is created, changed, filtered exactly and ordered by, in text and in a long string', async () => {
    const first = await request('POST', '/api/v1/notes/', { title: 'b', body: values.a, summary: values.a });
    expect(first.status, first.body.slice(0, 300)).toBe(201);
    const second = await request('POST', '/api/v1/notes/', { title: 'a', body: values.b, summary: values.e });
    expect(second.status, second.body.slice(0, 300)).toBe(201);
    const short = await request('POST', '/api/v1/notes/', { title: 'c', body: 'draft', summary: 'draft' });
    expect([first.json.body, second.json.body]).toEqual([values.a, values.b]);

    const patched = await request('PATCH', `/api/v1/notes/${first.json.id}/`, { body: values.d, summary: values.c });
    expect(patched.status, patched.body.slice(0, 300)).toBe(200);
    const other = await request('PATCH', `/api/v1/notes/${second.json.id}/`, { body: values.c });
    expect(other.status, other.body.slice(0, 300)).toBe(200);
    expect((await request('GET', `/api/v1/notes/${first.json.id}/`)).json).toMatchObject({ body: values.d, summary: values.c });

    expect(ids(await request('GET', '/api/v1/notes/?body=draft'))).toEqual([short.json.id]);
    expect(ids(await request('GET', `/api/v1/notes/?body__in=draft,${values.c.slice(0, 200)}`))).toEqual([short.json.id]);
    expect(ids(await request('GET', `/api/v1/notes/?summary=${values.c.slice(0, 200)}`))).toEqual([]);
    expect(ids(await request('GET', '/api/v1/notes/?summary=draft'))).toEqual([short.json.id]);

    const byBody = (await request('GET', '/api/v1/notes/?ordering=body')).json.results.map((note: { body: string }) => note.body);
    expect(byBody).toEqual([values.c, values.d, 'draft'].sort());
    const bySummary = (await request('GET', '/api/v1/notes/?ordering=-summary')).json.results.map((note: { summary: string }) => note.summary);
    expect(bySummary).toEqual([values.c, values.e, 'draft'].sort().reverse());

    for (const id of [first.json.id, second.json.id, short.json.id]) expect((await request('DELETE', `/api/v1/notes/${id}/`)).status).toBe(204);
  });
});

describe('a filter on long text', () => {
  const refusal = (reply: { status: number; json: { details?: Record<string, string[]> } }, parameter: string) => {
    expect(reply.status).toBe(400);
    return reply.json.details?.[parameter];
  };

  it('takes any value the field holds, compared whole; a pattern at most 200 characters', async () => {
    const body = incompressible(3000, 7);
    const summary = incompressible(4000, 8);
    const note = await request('POST', '/api/v1/notes/', { title: 'whole', body, summary });
    const other = await request('POST', '/api/v1/notes/', { title: 'other', body: `${body}x`, summary: summary.slice(0, 3999) });
    expect(ids(await request('GET', `/api/v1/notes/?body=${body}`))).toEqual([note.json.id]);
    expect(ids(await request('GET', `/api/v1/notes/?summary=${summary}`))).toEqual([note.json.id]);
    expect(ids(await request('GET', `/api/v1/notes/?body__in=x,${body}`))).toEqual([note.json.id]);
    // Longer than the field may hold: refused, naming its length; no pattern past 200 characters (each row scanned is matched against it).
    expect(refusal(await request('GET', `/api/v1/notes/?summary=${'x'.repeat(5001)}`), 'summary')).toEqual(['Ensure each value has no more than 5000 characters.']);
    expect(refusal(await request('GET', `/api/v1/notes/?title=${'x'.repeat(201)}`), 'title')).toEqual(['Ensure each value has no more than 200 characters.']);
    expect(refusal(await request('GET', `/api/v1/notes/?body__icontains=${body.slice(0, 201)}`), 'body__icontains')).toEqual(['Ensure each value has no more than 200 characters.']);
    expect(ids(await request('GET', `/api/v1/notes/?body__icontains=${body.slice(0, 200)}`)).sort()).toEqual([note.json.id, other.json.id].sort());
    // A collection's maxFilterLength bounds them all.
    expect(refusal(await request('GET', `/api/v1/capped/?body=${body}`), 'body')).toEqual(['Ensure each value has no more than 200 characters.']);
    expect((await request('GET', `/api/v1/capped/?summary=${'x'.repeat(200)}`)).status).toBe(200);
    for (const id of [note.json.id, other.json.id]) expect((await request('DELETE', `/api/v1/notes/${id}/`)).status).toBe(204);
  });
});

/** `[[[...]]]` nested `depth` levels around 1, as JSON text (which JSON.stringify cannot write past a few thousand levels). */
const nestedText = (depth: number): string => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
const nested = (depth: number): unknown => JSON.parse(nestedText(depth));

describe('deep JSON', () => {
  it('is stored up to 100 levels, and a deeper value is a 400 naming the field', async () => {
    const kept = await request('POST', '/api/v1/notes/', { title: 'deep', data: { list: nested(99) } });
    expect(kept.status, kept.body.slice(0, 300)).toBe(201);
    expect(kept.json.data).toEqual({ list: nested(99) });
    for (const depth of [101, 1000, 5000, 100_000]) {
      const refused = await request('POST', '/api/v1/notes/', `{"title": "deeper", "data": ${nestedText(depth)}}`);
      expect([refused.status, refused.json], `${depth}`).toEqual([400, { error: 'Invalid input.', code: 'validation_failed', details: { data: ['Nested deeper than 100 levels.'] } }]);
      const patched = await request('PATCH', `/api/v1/notes/${kept.json.id}/`, `{"data": {"list": ${nestedText(depth)}}}`);
      expect(patched.status, `${depth}`).toBe(400);
      expect(patched.json.details).toEqual({ data: ['Nested deeper than 100 levels.'] });
    }
    expect((await request('GET', `/api/v1/notes/${kept.json.id}/`)).json.data).toEqual({ list: nested(99) });
  });

  it('renders a deeper value stored before the limit, as JSON and on the browsable page', async () => {
    // As deep as PostgreSQL's jsonb takes, and past what JSON.stringify writes: objects and arrays in turn.
    const text = `${'{"a":['.repeat(5000)}1${'],"b":"x"}'.repeat(5000)}`;
    const { id } = await api.database.db.insertInto('notes').values({ title: 'old', data: text }).returning('id').executeTakeFirstOrThrow();
    const reply = await request('GET', `/api/v1/notes/${id}/`);
    expect(reply.status).toBe(200);
    expect(reply.body).toContain(`"data":${text}`);
    const list = await request('GET', '/api/v1/notes/?title=old');
    expect([list.status, list.body.includes(text)]).toEqual([200, true]);
    const page = await request('GET', `/api/v1/notes/${id}/`, undefined, { accept: 'text/html' });
    expect(page.status).toBe(200);
    expect(page.body).toContain('&quot;data&quot;: {\n    &quot;a&quot;: [\n      {\n');
    // The page's JSON is the answer's, indented to 100 levels and compact below (not the square of the depth in spaces).
    const shown = /<pre class="body" id="response-body">([^<]*)<\/pre>/.exec(page.body)![1]!;
    const unescaped = shown.replaceAll('&quot;', '"').replaceAll('&amp;', '&');
    expect(unescaped.replace(/\s/g, '')).toBe(reply.body);
    expect(page.body.length).toBeLessThan(10 * text.length);
    expect(page.body).toContain('<textarea id="field-data" name="data" data-kind="json" rows="4">{\n  &quot;a&quot;: [\n');
  });
});

describe('a hash index declared', () => {
  it('is refused where PostgreSQL could not make it: over two columns, or unique', () => {
    const declare = (index: { columns: string[]; unique?: boolean }) => () =>
      withGeneratedMigrations(defineApp({ collections: [collection('pairs', { serializer: serializer(model('pairs', { id: fields.id(), a: fields.text(), b: fields.text() }, { indexes: [{ ...index, hash: true }] }), { fields: ['id', 'a', 'b'] }) })] }));
    expect(declare({ columns: ['a', 'b'] })).toThrow('pairs: a hash index is on one column, in no order, neither unique nor ignoring case (a, b).');
    expect(declare({ columns: ['a'], unique: true })).toThrow('pairs: a hash index is on one column');
    expect(declare({ columns: ['a'] })).not.toThrow();
  });
});
