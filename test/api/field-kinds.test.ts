/**
 * The field kinds of core/field-kinds.ts through HTTP, on SQLite and PostgreSQL alike: what a body
 * may hold and the 400 for what it may not, how each is rendered, every lookup, ordering (a decimal
 * 12.50 after 3.00, dates, times, durations), the OpenAPI schema, and the columns generated
 * migrations make and `check` compares.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, declaredSchemaDifferences, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { lintProblems } from '../support/openapi-lint.js';

const kinds = {
  id: fields.id(),
  name: fields.slug({ unique: true }),
  language: fields.choice(['python', 'typescript', 'rust']),
  level: fields.string({ choices: ['low', 'high'], nullable: true }),
  starts: fields.date({ nullable: true }),
  at: fields.time({ nullable: true }),
  spent: fields.duration({ nullable: true }),
  cost: fields.decimal({ digits: 8, places: 2, nullable: true }),
  price: fields.decimal({ digits: 6, places: 2, asNumber: true, nullable: true }),
  fee: fields.decimal({ digits: 6, places: 2, default: '1.50' }),
  ratio: fields.float({ nullable: true }),
  big: fields.bigint({ nullable: true }),
  ref: fields.uuid({ generated: true }),
  meta: fields.json({ nullable: true }),
  tags: fields.json({ shape: 'array', nullable: true }),
  home: fields.url({ nullable: true }),
};
const names = Object.keys(kinds);
const filterable = names.filter((name) => name !== 'id');

const definition = (declared: typeof kinds) =>
  withGeneratedMigrations(
    defineApp({
      collections: [
        collection('projects', {
          serializer: serializer(model('projects', declared), { fields: names }),
          filterFields: filterable,
          orderingFields: ['name', 'language', 'starts', 'at', 'spent', 'cost', 'price', 'ratio', 'big', 'ref'],
        }),
      ],
    }),
  );
const app = definition(kinds);

let api: TestApi;
let alice: TestUser;

const post = (body: unknown) => api.request('POST', '/api/v1/projects/', { token: alice.token, body });
const list = (query: string) => api.request('GET', `/api/v1/projects/?${query}`, { token: alice.token });
const namesOf = async (query: string): Promise<string[]> => {
  const reply = await list(query);
  expect(reply.status, JSON.stringify(reply.json)).toBe(200);
  return reply.json.results.map((record: { name: string }) => record.name);
};

const UUID_A = '6f1c2b4e-8a3d-4c5e-9f70-1a2b3c4d5e6f';

beforeAll(async () => {
  api = await startApi({}, app);
  alice = await api.user('alice');
  const rows = [
    { name: 'cheap', language: 'python', starts: '2026-01-31', at: '09:30', spent: 'PT90M', cost: '3.00', price: 3, ratio: 0.5, big: 10, meta: { owner: 'alice', n: 1 }, tags: ['a'], home: 'https://example.com/cheap' },
    { name: 'dear', language: 'rust', level: 'high', starts: '2026-02-01', at: '17:05:30.25', spent: 'P1DT2H', cost: 12.5, price: '12.5', ratio: 2.25, big: '9007199254740993', ref: UUID_A.toUpperCase(), meta: ['owner'], home: 'http://example.org' },
    { name: 'mid', language: 'typescript', level: 'low', starts: '2025-12-31', at: '12:00:00', spent: 'PT2H', cost: '5', price: 5.1, ratio: -1, big: -3, meta: 'owner', tags: [] },
    { name: 'empty', language: 'python' },
  ];
  for (const row of rows) {
    const reply = await post(row);
    expect(reply.status, JSON.stringify(reply.json)).toBe(201);
  }
});
afterAll(() => api.close());

describe('rendering', () => {
  it('renders each kind in its JSON shape', async () => {
    const reply = await list('ordering=name');
    const [cheap, dear, empty, mid] = reply.json.results;
    expect(cheap).toMatchObject({
      language: 'python', level: null, starts: '2026-01-31', at: '09:30:00', spent: 'PT1H30M', cost: '3.00', price: 3,
      ratio: 0.5, big: 10, meta: { owner: 'alice', n: 1 }, tags: ['a'], home: 'https://example.com/cheap',
    });
    expect(dear).toMatchObject({ level: 'high', at: '17:05:30.25', spent: 'P1DT2H', cost: '12.50', price: 12.5, ratio: 2.25, ref: UUID_A, meta: ['owner'] });
    expect(mid).toMatchObject({ cost: '5.00', price: 5.1, big: -3, meta: 'owner', tags: [] });
    // Absent values are null; a generated UUID is a version 4 one.
    expect(empty).toMatchObject({ starts: null, at: null, spent: null, cost: null, price: null, ratio: null, big: null, meta: null, tags: null, home: null });
    // A default written '1.50' reads back so.
    expect(empty.fee).toBe('1.50');
    expect(empty.ref).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('renders a bigint beyond 2^53 as a string of its digits, exactly, on both databases', async () => {
    const reply = await list('name=dear');
    expect(reply.json.results[0].big).toBe('9007199254740993');
  });

  it('renders a bigint beyond 2^53 exactly in a write\'s reply, a record and a list ordered by it', async () => {
    const created = await post({ name: 'huge', language: 'python', big: '-9223372036854775808' });
    expect([created.status, created.json.big]).toEqual([201, '-9223372036854775808']);
    const url = `/api/v1/projects/${created.json.id}/`;
    const patched = await api.request('PATCH', url, { token: alice.token, body: { big: '9223372036854775807' } });
    expect([patched.status, patched.json.big]).toEqual([200, '9223372036854775807']);
    expect((await api.request('GET', url, { token: alice.token })).json.big).toBe('9223372036854775807');
    const ordered = await list('ordering=-big&big__isnull=false');
    expect(ordered.json.results.map((record: { big: unknown }) => record.big)).toEqual(['9223372036854775807', '9007199254740993', 10, -3]);
    expect((await api.request('DELETE', url, { token: alice.token })).status).toBe(204);
  });
});

describe('input', () => {
  it.each([
    ['language', 'cobol', 'is not a valid choice. Choices: python, typescript, rust.'],
    ['level', 'medium', 'Choices: low, high.'],
    ['starts', '2026-02-30', 'Enter a valid date.'],
    ['starts', '2026-01-31T10:00:00Z', 'YYYY-MM-DD'],
    ['at', '25:00', 'Enter a valid time'],
    ['spent', 'P1M', 'ISO 8601 duration'],
    ['spent', 'PT', 'ISO 8601 duration'],
    ['cost', '1234567.5', 'no more than 6 digits before the decimal point'],
    ['cost', '1.234', 'no more than 2 decimal places'],
    ['cost', 'twelve', 'A valid number is required.'],
    ['cost', 1e-7, 'no more than 2 decimal places'],
    ['price', true, 'A valid number is required.'],
    ['ratio', '1.5', 'A valid number is required.'],
    ['big', 1.5, 'A valid integer is required'],
    ['big', '99999999999999999999', 'fits in 64 bits'],
    ['ref', 'not-a-uuid', 'Must be a valid UUID.'],
    ['tags', { a: 1 }, 'Expected a list of items.'],
    ['home', 'javascript:alert(1)', 'Enter a valid URL.'],
    ['home', 'not a url', 'Enter a valid URL.'],
    ['name', 'has space', 'valid "slug"'],
  ])('refuses %s = %j with 400 naming the field', async (field, value, message) => {
    const reply = await post({ name: 'bad', language: 'python', [field]: value });
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('validation_failed');
    expect(Object.keys(reply.json.details)).toEqual([field]);
    expect(reply.json.details[field][0]).toContain(message);
  });

  it('normalises what it accepts: a UUID without hyphens, a decimal number, a duration in hours', async () => {
    const reply = await post({ name: 'normal', language: 'rust', ref: '{6F1C2B4E8A3D4C5E9F701A2B3C4D5E60}', cost: -0.0, spent: 'PT49H', at: '07:08:09.500000' });
    expect(reply.status, JSON.stringify(reply.json)).toBe(201);
    expect(reply.json).toMatchObject({ ref: '6f1c2b4e-8a3d-4c5e-9f70-1a2b3c4d5e60', cost: '0.00', spent: 'P2DT1H', at: '07:08:09.5' });
    expect((await api.request('DELETE', `/api/v1/projects/${reply.json.id}/`, { token: alice.token })).status).toBe(204);
  });

  it('updates each kind with PATCH, and refuses a bad value there too', async () => {
    const created = await post({ name: 'patched', language: 'python' });
    const url = `/api/v1/projects/${created.json.id}/`;
    const changes = { language: 'rust', starts: '2027-06-01', at: '23:59:59.999999', spent: 'PT0S', cost: '-999999.99', big: '-9007199254740991', meta: { deep: [1, { x: null }] }, tags: ['b', 2] };
    const patched = await api.request('PATCH', url, { token: alice.token, body: changes });
    expect(patched.status, JSON.stringify(patched.json)).toBe(200);
    expect(patched.json).toMatchObject({ ...changes, big: -9007199254740991 });
    expect((await api.request('GET', url, { token: alice.token })).json).toMatchObject({ ...changes, big: -9007199254740991 });
    const refused = await api.request('PATCH', url, { token: alice.token, body: { language: 'cobol' } });
    expect([refused.status, refused.json.details.language[0]]).toEqual([400, '"cobol" is not a valid choice. Choices: python, typescript, rust.']);
    expect((await api.request('DELETE', url, { token: alice.token })).status).toBe(204);
  });
});

describe('lookups', () => {
  it.each([
    ['language=rust', ['dear']],
    ['language__in=python,typescript', ['cheap', 'empty', 'mid']],
    ['language__isnull=false', ['cheap', 'dear', 'empty', 'mid']],
    ['level=high', ['dear']],
    ['level__isnull=true', ['cheap', 'empty']],
    ['starts=2026-01-31', ['cheap']],
    ['starts__gt=2025-12-31', ['cheap', 'dear']],
    ['starts__lte=2026-01-31', ['cheap', 'mid']],
    ['starts__range=2026-01-01,2026-12-31', ['cheap', 'dear']],
    ['starts__in=2026-02-01,2025-12-31', ['dear', 'mid']],
    ['at__lt=12:00', ['cheap']],
    ['at__gte=12:00:00', ['dear', 'mid']],
    ['at=17:05:30.250', ['dear']],
    ['spent__gt=PT1H30M', ['dear', 'mid']],
    ['spent=PT120M', ['mid']],
    ['spent__range=PT1H,PT2H', ['cheap', 'mid']],
    // Decimals compare as numbers on both databases: 5 is below 12.50, and 5 equals 5.00.
    ['cost__gt=5', ['dear']],
    ['cost__gte=5', ['dear', 'mid']],
    ['cost=5', ['mid']],
    ['cost__lt=12.5', ['cheap', 'mid']],
    ['cost__in=3,12.50', ['cheap', 'dear']],
    ['price__lte=5.10', ['cheap', 'mid']],
    ['ratio__gt=0', ['cheap', 'dear']],
    ['ratio__lt=-0.5', ['mid']],
    ['big__gt=10', ['dear']],
    ['big__lt=0', ['mid']],
    // Stored exactly on both (bound as digits), whatever the reading of it.
    ['big=9007199254740993', ['dear']],
    ['big=9007199254740992', []],
    [`ref=${UUID_A.toUpperCase()}`, ['dear']],
    [`ref__in=${UUID_A.replaceAll('-', '')}`, ['dear']],
    ['meta__has_key=owner', ['cheap']],
    ['meta__has_key=n', ['cheap']],
    ['meta__has_key=nobody', []],
    ['meta__isnull=true', ['empty']],
    ['tags__isnull=false', ['cheap', 'mid']],
    ['home__icontains=EXAMPLE.ORG', ['dear']],
    ['home__startswith=https://', ['cheap']],
    ['name__endswith=ap', ['cheap']],
  ])('%s', async (query, expected) => {
    expect((await namesOf(`${query}&ordering=name`)).sort()).toEqual(expected);
  });

  it.each([
    ['language=cobol', 'language', '"cobol" is not a valid choice. Choices: python, typescript, rust.'],
    ['language__in=python,cobol', 'language__in', 'Choices: python, typescript, rust.'],
    ['language__contains=py', 'language__contains', 'Unknown lookup "contains"'],
    ['starts=2026-13-01', 'starts', 'Enter a valid date'],
    ['cost__gt=5.001', 'cost__gt', 'no more than 2 decimal places'],
    ['cost__gt=abc', 'cost__gt', 'A valid number is required.'],
    ['ratio__gt=NaN', 'ratio__gt', 'A valid number is required.'],
    ['ref=123', 'ref', 'Must be a valid UUID.'],
    ['meta=1', 'meta', 'Unknown lookup "exact"'],
    ['spent__gt=P1Y', 'spent__gt', 'ISO 8601 duration'],
  ])('%s is a 400 naming the parameter', async (query, parameter, message) => {
    const reply = await list(query);
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('validation_failed');
    expect(reply.json.details[parameter][0]).toContain(message);
  });
});

describe('ordering', () => {
  it.each([
    // 3.00 before 5.00 before 12.50: numerically, not as text; nulls as the dialects agree elsewhere.
    ['cost', ['cheap', 'mid', 'dear']],
    ['-cost', ['dear', 'mid', 'cheap']],
    ['price', ['cheap', 'mid', 'dear']],
    ['starts', ['mid', 'cheap', 'dear']],
    ['at', ['cheap', 'mid', 'dear']],
    ['spent', ['cheap', 'mid', 'dear']],
    ['ratio', ['mid', 'cheap', 'dear']],
    ['big', ['mid', 'cheap', 'dear']],
  ])('by %s', async (ordering, expected) => {
    const field = ordering.replace('-', '');
    expect(await namesOf(`ordering=${ordering}&${field}__isnull=false&language__in=python,typescript,rust`)).toEqual(expected);
  });

  it('orders choices as their text', async () => {
    expect(await namesOf('ordering=-language')).toEqual(['mid', 'dear', 'cheap', 'empty']);
  });

  it('refuses to order by a JSON field, which the databases would order differently', () => {
    const projects = serializer(model('projects', kinds), { fields: names });
    expect(() => collection('projects', { serializer: projects, orderingFields: ['meta'] })).toThrow('projects: cannot order by "meta".');
  });

  it('orders by a UUID as its text', async () => {
    const reply = await list('ordering=ref');
    const refs = reply.json.results.map((record: { ref: string }) => record.ref);
    expect(refs).toEqual([...refs].sort());
  });
});

describe('OpenAPI', () => {
  it('types each kind, with an enum for choices, in a document the Redocly linter passes', async () => {
    const document = (await api.request('GET', '/api/v1/schema/')).json;
    expect(await lintProblems(document)).toEqual([]);
    const properties = document.components.schemas.Project.properties;
    expect(properties.language).toEqual({ type: 'string', enum: ['python', 'typescript', 'rust'] });
    expect(properties.level).toEqual({ type: ['string', 'null'], enum: ['low', 'high', null] });
    expect(properties.starts).toEqual({ type: ['string', 'null'], format: 'date' });
    expect(properties.at).toEqual({ type: ['string', 'null'], format: 'time' });
    expect(properties.spent).toEqual({ type: ['string', 'null'], format: 'duration' });
    expect(properties.cost).toEqual({ type: ['string', 'null'], format: 'decimal', pattern: '^-?\\d{0,6}(?:\\.\\d{0,2})?$' });
    expect(properties.price).toMatchObject({ type: ['number', 'null'], multipleOf: 0.01 });
    expect(properties.ratio).toEqual({ type: ['number', 'null'], format: 'double' });
    expect(properties.big).toMatchObject({ type: ['integer', 'string', 'null'], format: 'int64' });
    expect(properties.ref).toEqual({ type: 'string', format: 'uuid' });
    expect(properties.meta).toEqual({});
    expect(properties.tags).toEqual({ type: ['array', 'null'] });
    expect(properties.home).toMatchObject({ type: ['string', 'null'], format: 'uri', maxLength: 200 });
    expect(properties.name).toMatchObject({ type: 'string', pattern: '^[-a-zA-Z0-9_]+$', maxLength: 50 });
    // A generated UUID need not be sent.
    expect(document.components.schemas.ProjectCreate.required).toEqual(['name', 'language']);
  });
});

describe('columns', () => {
  it('generated migrations make the declared columns, which check compares, decimal digits included', async () => {
    expect(await declaredSchemaDifferences(api.database, app)).toEqual([]);
    const wider = definition({ ...kinds, cost: fields.decimal({ digits: 10, places: 2, nullable: true }) });
    expect(await declaredSchemaDifferences(api.database, wider)).toEqual(['column "projects.cost" is numeric(8,2), declared numeric(10,2)']);
    // A decimal's default compares as a number, however it is spelled ('1.50' is stored as 1.50 on PostgreSQL, as text on SQLite).
    expect(await declaredSchemaDifferences(api.database, definition({ ...kinds, fee: fields.decimal({ digits: 6, places: 2, default: '1.5' }) }))).toEqual([]);
    const other = await declaredSchemaDifferences(api.database, definition({ ...kinds, fee: fields.decimal({ digits: 6, places: 2, default: '2.50' }) }));
    expect(other).toEqual([expect.stringMatching(/^column "projects\.fee" defaults to "?1\.50?"?, declared "2\.50"$/)]);
  });
});
