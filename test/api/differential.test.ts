/**
 * Differential property tests of the list query language: random data sets and
 * random list queries go through the HTTP API and through a plain in-memory
 * model of docs/contract.md / docs/query-language.md; the pages must be identical.
 *
 * Reproduce a failure with the seed fast-check prints:
 *   RESTFOLD_FC_SEED=<seed> npx vitest run test/api/differential.test.ts
 * RESTFOLD_FC_RUNS raises or lowers the number of data sets per collection;
 * RESTFOLD_FC_SHRINK=1 shrinks a failing case to a smaller one.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { users } from '../../src/service/users.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const SEED = Number(process.env.RESTFOLD_FC_SEED ?? 20_240_501);
const RUNS = Number(process.env.RESTFOLD_FC_RUNS ?? 40);
// A failure reports the exact request and data set; shrinking it further (slow, memory-hungry) is opt-in.
const SHRINK = process.env.RESTFOLD_FC_SHRINK === '1';

// ---------------------------------------------------------------------------
// A test collection whose fields may all be NULL (the service's own never are).

const Note = model('notes', {
  id: fields.id(),
  label: fields.string({ maxLength: 100, nullable: true, blank: true }),
  tag: fields.text({ nullable: true, blank: true }),
  rank: fields.integer({ nullable: true }),
  flag: fields.boolean({ nullable: true }),
  at: fields.timestamp({ nullable: true }),
});

const notes = collection('notes', {
  serializer: serializer(Note, { fields: ['id', 'label', 'tag', 'rank', 'flag', 'at'], search: ['label', 'tag'] }),
  filterFields: ['id', 'label', 'tag', 'rank', 'flag', 'at'],
  orderingFields: ['id', 'label', 'rank', 'flag', 'at'],
  pageSize: 5,
  maxPageSize: 7,
});

// The field kinds with lookups of their own: choices, dates, decimals (numeric on both databases), UUIDs.
const CHOICES = ['python', 'rust', 'typescript'];
const Item = model('items', {
  id: fields.id(),
  name: fields.string({ maxLength: 100, nullable: true, blank: true }),
  language: fields.choice(CHOICES, { nullable: true }),
  day: fields.date({ nullable: true }),
  cost: fields.decimal({ digits: 6, places: 2, nullable: true }),
  ref: fields.uuid({ nullable: true }),
});

const items = collection('items', {
  serializer: serializer(Item, { fields: ['id', 'name', 'language', 'day', 'cost', 'ref'], search: ['name'] }),
  filterFields: ['id', 'name', 'language', 'day', 'cost', 'ref'],
  orderingFields: ['id', 'name', 'language', 'day', 'cost', 'ref'],
  pageSize: 5,
  maxPageSize: 7,
});

const app = withGeneratedMigrations(defineApp({ collections: [users, notes, items] }));

// ---------------------------------------------------------------------------
// The model: records are plain objects, values as the API renders them.

type Value = string | number | boolean | null;
type Rec = Record<string, Value> & { id: number };
type FieldType = 'string' | 'integer' | 'boolean' | 'timestamp' | 'choice' | 'date' | 'decimal' | 'uuid';

interface Spec {
  readonly name: string;
  readonly fields: Readonly<Record<string, FieldType>>;
  readonly search: readonly string[];
  readonly ordering: readonly string[];
  readonly pageSize: number;
  readonly maxPageSize: number;
}

const usersSpec: Spec = {
  name: 'users',
  fields: { id: 'integer', username: 'string', email: 'string', is_active: 'boolean', date_joined: 'timestamp' },
  search: ['username', 'email'],
  ordering: ['id', 'username', 'email', 'date_joined'],
  pageSize: 20,
  maxPageSize: 100,
};

const itemsSpec: Spec = {
  name: 'items',
  fields: { id: 'integer', name: 'string', language: 'choice', day: 'date', cost: 'decimal', ref: 'uuid' },
  search: ['name'],
  ordering: ['id', 'name', 'language', 'day', 'cost', 'ref'],
  pageSize: 5,
  maxPageSize: 7,
};

const notesSpec: Spec = {
  name: 'notes',
  fields: { id: 'integer', label: 'string', tag: 'string', rank: 'integer', flag: 'boolean', at: 'timestamp' },
  search: ['label', 'tag'],
  ordering: ['id', 'label', 'rank', 'flag', 'at'],
  pageSize: 5,
  maxPageSize: 7,
};

/** A filter operand as generated: the model reads the structure, the URL gets its text. */
type Operand =
  | { kind: 'text'; value: string }
  | { kind: 'integer'; value: number }
  | { kind: 'boolean'; value: boolean; text: string }
  | { kind: 'day'; day: string }
  | { kind: 'instant'; ms: number; text: string }
  /** A value as the model compares it (`12.50`, a lower-case UUID), and as the URL writes it (`12.5`, upper case). */
  | { kind: 'written'; value: string; text: string }
  /** Text the field refuses (a choice not declared): the whole request is a 400. */
  | { kind: 'invalid'; text: string };

interface FilterSpec {
  readonly field: string;
  readonly lookup: string;
  /** One operand; a list for `in`; two for `range`; a boolean for `isnull`. */
  readonly operands: readonly Operand[];
  readonly isnull?: { value: boolean; text: string };
  /** `exact` written as the bare field name (`username=x`) rather than `username__exact=x`. */
  readonly bare?: boolean;
}

interface QuerySpec {
  readonly filters: readonly FilterSpec[];
  readonly search?: string;
  readonly ordering?: readonly { field: string; descending: boolean }[];
  readonly page?: number;
  readonly pageSize?: number;
}

/** Code point order (what SQLite's BINARY and PostgreSQL's C / C.UTF-8 collations give): UTF-8 byte order. */
const compareText = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
const fold = (text: string): string => text.toLowerCase();
const DAY_MS = 86_400_000;

function operandText(operand: Operand): string {
  switch (operand.kind) {
    case 'text':
      return operand.value;
    case 'integer':
      return String(operand.value);
    case 'boolean':
    case 'instant':
    case 'written':
    case 'invalid':
      return operand.text;
    case 'day':
      return operand.day;
  }
}

function compareValues(type: FieldType, a: Value, b: Value): number {
  // Dates in ISO form and canonical (lower-case) UUIDs sort as their text; decimals as numbers.
  if (type === 'string' || type === 'choice' || type === 'date' || type === 'uuid') return compareText(a as string, b as string);
  if (type === 'timestamp') return Date.parse(a as string) - Date.parse(b as string);
  return Number(a) - Number(b);
}

/** One comparison of a stored value with an operand, bare dates meaning their day's start. */
function compareWith(type: FieldType, stored: Value, operand: Operand): number {
  if (operand.kind === 'day') return Date.parse(stored as string) - Date.parse(`${operand.day}T00:00:00.000Z`);
  if (operand.kind === 'instant') return Date.parse(stored as string) - operand.ms;
  if (operand.kind === 'boolean') return Number(stored) - Number(operand.value);
  if (operand.kind === 'invalid') throw new Error('an invalid operand is never compared');
  return compareValues(type, stored, operand.value);
}

/** `exact` (and each value of `in`): a bare date means its whole UTC day. */
function equals(type: FieldType, stored: Value, operand: Operand): boolean {
  if (operand.kind === 'day') {
    const start = Date.parse(`${operand.day}T00:00:00.000Z`);
    const time = Date.parse(stored as string);
    return time >= start && time < start + DAY_MS;
  }
  return compareWith(type, stored, operand) === 0;
}

function matches(spec: Spec, record: Rec, filter: FilterSpec): boolean {
  const type = spec.fields[filter.field]!;
  const stored = record[filter.field]!;
  if (filter.lookup === 'isnull') return (stored === null) === filter.isnull!.value;
  // Every other comparison with NULL is unknown, so the record is left out (SQL's rule).
  if (stored === null) return false;
  const [first] = filter.operands as [Operand];
  const text = (): string => (first as { value: string }).value;
  switch (filter.lookup) {
    case 'exact':
      return equals(type, stored, first);
    case 'iexact':
      return fold(stored as string) === fold(text());
    case 'contains':
      return (stored as string).includes(text());
    case 'icontains':
      return fold(stored as string).includes(fold(text()));
    case 'startswith':
      return (stored as string).startsWith(text());
    case 'endswith':
      return (stored as string).endsWith(text());
    case 'gt':
      return compareWith(type, stored, first) > 0;
    case 'gte':
      return compareWith(type, stored, first) >= 0;
    case 'lt':
      return compareWith(type, stored, first) < 0;
    case 'lte':
      return compareWith(type, stored, first) <= 0;
    case 'in':
      return filter.operands.some((operand) => equals(type, stored, operand));
    case 'range': {
      const [low, high] = filter.operands as [Operand, Operand];
      const belowHigh = high.kind === 'day' ? equals(type, stored, high) || compareWith(type, stored, high) < 0 : compareWith(type, stored, high) <= 0;
      return compareWith(type, stored, low) >= 0 && belowHigh;
    }
    default:
      throw new Error(`no model for lookup ${filter.lookup}`);
  }
}

/** Search: every whitespace-separated term is a case-insensitive substring of some search field. */
function found(spec: Spec, record: Rec, search: string): boolean {
  const terms = search.split(/\s+/).filter(Boolean);
  return terms.every((term) =>
    spec.search.some((name) => record[name] !== null && fold(record[name] as string).includes(fold(term))),
  );
}

/** Ordering: NULL is the largest value; ties always end in id ascending. */
function order(spec: Spec, records: Rec[], ordering: readonly { field: string; descending: boolean }[]): Rec[] {
  return [...records].sort((a, b) => {
    for (const { field, descending } of ordering) {
      const [x, y] = [a[field]!, b[field]!];
      let difference: number;
      if (x === null || y === null) difference = x === y ? 0 : x === null ? 1 : -1;
      else difference = compareValues(spec.fields[field]!, x, y);
      if (difference !== 0) return descending ? -difference : difference;
    }
    return a.id - b.id;
  });
}

interface Expected {
  status: number;
  count?: number;
  ids?: number[];
  next?: string | null;
  previous?: string | null;
}

function queryParams(query: QuerySpec): [string, string][] {
  const params: [string, string][] = [];
  for (const filter of query.filters) {
    const name = filter.bare ? filter.field : `${filter.field}__${filter.lookup}`;
    const text = filter.isnull ? filter.isnull.text : filter.operands.map(operandText).join(',');
    params.push([name, text]);
  }
  if (query.search !== undefined) params.push(['search', query.search]);
  if (query.ordering) params.push(['ordering', query.ordering.map((term) => `${term.descending ? '-' : ''}${term.field}`).join(',')]);
  if (query.page !== undefined) params.push(['page', String(query.page)]);
  if (query.pageSize !== undefined) params.push(['page_size', String(query.pageSize)]);
  return params;
}

/** The link to another page: the request's parameters, with `page` replaced (left out for page 1). */
function pageLink(params: [string, string][], page: number): string {
  const kept = params.filter(([name]) => name !== 'page');
  if (page > 1) kept.push(['page', String(page)]);
  return kept.map(([name, value]) => `${name}=${value}`).sort().join('&');
}

function expectedPage(spec: Spec, records: Rec[], query: QuerySpec, params: [string, string][]): Expected {
  if (query.filters.some((filter) => filter.operands.some((operand) => operand.kind === 'invalid'))) return { status: 400 };
  let selected = records.filter((record) => query.filters.every((filter) => matches(spec, record, filter)));
  if (query.search !== undefined) selected = selected.filter((record) => found(spec, record, query.search!));
  selected = order(spec, selected, query.ordering ?? []);
  const page = query.page ?? 1;
  const size = Math.min(query.pageSize ?? spec.pageSize, spec.maxPageSize);
  const count = selected.length;
  if (page > 1 && (page - 1) * size >= count) return { status: 404 };
  return {
    status: 200,
    count,
    ids: selected.slice((page - 1) * size, page * size).map((record) => record.id),
    next: page * size < count ? pageLink(params, page + 1) : null,
    previous: page > 1 ? pageLink(params, page - 1) : null,
  };
}

/** A link from the API, reduced to what the model predicts: its parameters, sorted. */
function linkParams(link: string | null): string | null {
  if (link === null) return null;
  const url = new URL(link);
  return [...url.searchParams].map(([name, value]) => `${name}=${value}`).sort().join('&');
}

// ---------------------------------------------------------------------------
// Generators of awkward data and of queries over it.

/** Unicode case pairs (é/É, ß/ẞ, the Kelvin sign), LIKE's metacharacters, a space, astral and fullwidth letters. */
const CHARS = ['a', 'A', 'b', 'é', 'É', 'ß', 'ẞ', 'K', 'k', '%', '_', '\\', '-', ' ', '😀', 'Ｚ', 'ｚ', '.'];
const textArb = (maxLength: number) => fc.array(fc.constantFrom(...CHARS), { maxLength }).map((chars) => chars.join(''));
/** Query text: no commas (they separate `in` and `range` values), no edge whitespace worries (bound, not trimmed). */
const wordArb = fc.array(fc.constantFrom(...CHARS.filter((char) => char !== ' ')), { minLength: 1, maxLength: 3 }).map((c) => c.join(''));

/** A slice by code points, so no surrogate pair is cut in half. */
const codePoints = (text: string, start: number, end?: number): string => [...text].slice(start, end).join('');

const DAYS = ['2023-12-31', '2024-01-01', '2024-01-02', '2024-01-03'];
const TIMES = ['00:00:00.000', '00:00:00.001', '12:00:00.000', '23:59:59.999'];
/** Timestamps on and around UTC day boundaries; few enough that sort keys repeat. */
const INSTANTS = DAYS.flatMap((day) => TIMES.map((time) => `${day}T${time}Z`));
const instantArb = fc.constantFrom(...INSTANTS);

/** Decimals as the API renders them (two places), apart by less than a unit of a double's 15 digits, and both sides of zero. */
const DECIMALS = ['-3.25', '0.00', '0.10', '0.11', '3.00', '5.00', '12.50', '9999.99'];
const UUIDS = ['0b7f6c1e-3d2a-4e5f-8a9b-0c1d2e3f4a5b', '5a5a5a5a-0000-4000-8000-000000000001', 'f0e1d2c3-b4a5-4968-8776-655443322110'];

interface UserRow { username: string; email: string; is_active: boolean; date_joined: string }
interface NoteRow { label: string | null; tag: string | null; rank: number | null; flag: boolean | null; at: string | null }

type ItemRow = Record<'name' | 'language' | 'day' | 'cost' | 'ref', string | null>;

const itemsArb: fc.Arbitrary<ItemRow[]> = fc.array(
  fc.record({
    // Few names, so a search (drawn from them) keeps several rows for the other fields to sort and filter.
    name: fc.option(fc.constantFrom('alpha', 'Alps', 'beta'), { freq: 4 }),
    language: fc.option(fc.constantFrom(...CHOICES), { freq: 4 }),
    day: fc.option(fc.constantFrom(...DAYS), { freq: 4 }),
    cost: fc.option(fc.constantFrom(...DECIMALS), { freq: 4 }),
    ref: fc.option(fc.constantFrom(...UUIDS), { freq: 4 }),
  }),
  { minLength: 2, maxLength: 12 },
);

const usersArb: fc.Arbitrary<UserRow[]> = fc.uniqueArray(
  fc.record({ username: textArb(4), email: textArb(3), is_active: fc.boolean(), date_joined: instantArb }),
  { maxLength: 12, selector: (user) => user.username.toLowerCase() },
);

const notesArb: fc.Arbitrary<NoteRow[]> = fc.array(
  fc.record({
    label: fc.option(textArb(3), { freq: 4 }),
    tag: fc.option(textArb(3), { freq: 4 }),
    rank: fc.option(fc.integer({ min: -2, max: 3 }), { freq: 4 }),
    flag: fc.option(fc.boolean(), { freq: 3 }),
    at: fc.option(instantArb, { freq: 4 }),
  }),
  { maxLength: 12 },
);

/** Timestamp operands: bare dates, or instants written in UTC or with an offset, at the same moments as the data. */
const timestampOperand: fc.Arbitrary<Operand> = fc.oneof(
  fc.constantFrom(...DAYS).map((day): Operand => ({ kind: 'day', day })),
  fc.tuple(instantArb, fc.constantFrom('Z', '+02:00', '-05:30')).map(([instant, offset]): Operand => {
    const ms = Date.parse(instant);
    if (offset === 'Z') return { kind: 'instant', ms, text: instant };
    const minutes = (offset.startsWith('-') ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4)));
    const local = new Date(ms + minutes * 60_000).toISOString().slice(0, 23);
    return { kind: 'instant', ms, text: `${local}${offset}` };
  }),
);

function operandArb(type: FieldType, ids: readonly number[], texts: readonly string[]): fc.Arbitrary<Operand> {
  switch (type) {
    case 'string': {
      // Values present in the data (and their pieces) make matches likely; random words make misses.
      const pieces = texts.flatMap((text) => [text, codePoints(text, 1), codePoints(text, 0, 2), text.toUpperCase()]).filter((t) => !t.includes(','));
      const known = pieces.length > 0 ? [{ weight: 4, arbitrary: fc.constantFrom(...pieces) }] : [];
      return fc.oneof({ weight: 1, arbitrary: wordArb }, { weight: 1, arbitrary: fc.constant('') }, ...known).map((value): Operand => ({ kind: 'text', value }));
    }
    case 'integer':
      return fc.oneof(fc.integer({ min: -3, max: 3 }), ...(ids.length > 0 ? [{ weight: 3, arbitrary: fc.constantFrom(...ids) }] : [])).map((value): Operand => ({ kind: 'integer', value }));
    case 'boolean':
      return fc.constantFrom('true', 'false', '1', '0').map((text): Operand => ({ kind: 'boolean', value: text === 'true' || text === '1', text }));
    case 'timestamp':
      return timestampOperand;
    case 'choice':
      // Mostly declared choices; now and then one that is not (`?language=cobol` is a 400, not an empty page).
      return fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(...CHOICES).map((value): Operand => ({ kind: 'written', value, text: value })) },
        { weight: 1, arbitrary: fc.constantFrom('cobol', 'Python', '').map((text): Operand => ({ kind: 'invalid', text })) },
      );
    case 'date':
      return fc.constantFrom(...DAYS).map((day): Operand => ({ kind: 'written', value: day, text: day }));
    case 'decimal':
      // The same number written at the declared places, shortest, or with a leading zero.
      return fc.tuple(fc.constantFrom(...DECIMALS), fc.constantFrom(0, 1, 2)).map(([value, form]): Operand => {
        const text = form === 0 ? value : form === 1 ? String(Number(value)) : value.replace(/^(-?)/, (sign) => `${sign}0`);
        return { kind: 'written', value, text };
      });
    case 'uuid':
      return fc.tuple(fc.constantFrom(...UUIDS), fc.constantFrom(0, 1, 2)).map(([value, form]): Operand => {
        const text = form === 0 ? value : form === 1 ? value.toUpperCase() : value.replaceAll('-', '');
        return { kind: 'written', value, text };
      });
  }
}

const LOOKUPS: Record<FieldType, readonly string[]> = {
  string: ['exact', 'iexact', 'contains', 'icontains', 'startswith', 'endswith', 'gt', 'gte', 'lt', 'lte', 'in', 'isnull', 'range'],
  integer: ['exact', 'gt', 'gte', 'lt', 'lte', 'in', 'isnull', 'range'],
  timestamp: ['exact', 'gt', 'gte', 'lt', 'lte', 'in', 'isnull', 'range'],
  boolean: ['exact', 'in', 'isnull'],
  choice: ['exact', 'in', 'isnull'],
  date: ['exact', 'gt', 'gte', 'lt', 'lte', 'in', 'isnull', 'range'],
  decimal: ['exact', 'gt', 'gte', 'lt', 'lte', 'in', 'isnull', 'range'],
  uuid: ['exact', 'in', 'isnull'],
};

function filterArb(spec: Spec, records: readonly Rec[]): fc.Arbitrary<FilterSpec> {
  return fc.constantFrom(...Object.keys(spec.fields)).chain((field) => {
    const type = spec.fields[field]!;
    const texts = records.map((record) => record[field]).filter((value): value is string => typeof value === 'string');
    const operand = operandArb(type, records.map((record) => record.id), texts);
    return fc.constantFrom(...LOOKUPS[type]).chain((lookup): fc.Arbitrary<FilterSpec> => {
      if (lookup === 'isnull') {
        return fc.constantFrom('true', 'false', '1', '0').map((text) => ({ field, lookup, operands: [], isnull: { value: text === 'true' || text === '1', text } }));
      }
      const count = lookup === 'in' ? fc.integer({ min: 1, max: 3 }) : fc.constant(lookup === 'range' ? 2 : 1);
      const operands = count.chain((n) => fc.array(operand, { minLength: n, maxLength: n }));
      return fc.tuple(operands, fc.boolean()).map(([list, bare]) => ({ field, lookup, operands: list, bare: bare && lookup === 'exact' }));
    });
  });
}

function queryArb(spec: Spec, records: readonly Rec[]): fc.Arbitrary<QuerySpec> {
  const searchTexts = spec.search.flatMap((name) => records.map((record) => record[name])).filter((v): v is string => typeof v === 'string' && v.trim() !== '');
  const term = searchTexts.length > 0 ? fc.oneof(wordArb, { weight: 3, arbitrary: fc.constantFrom(...searchTexts.map((text) => codePoints(text.trim().split(/\s+/)[0]!, 0, 2))) }) : wordArb;
  return fc.record(
    {
      filters: fc.uniqueArray(filterArb(spec, records), { maxLength: 2, selector: (filter) => `${filter.field}__${filter.lookup}` }),
      search: fc.array(term, { minLength: 1, maxLength: 2 }).map((terms) => terms.join('  ')),
      ordering: fc.uniqueArray(
        fc.record({ field: fc.constantFrom(...spec.ordering), descending: fc.boolean() }),
        { minLength: 1, maxLength: 2, selector: (term) => term.field },
      ),
      // Mostly early pages: later ones are past the end of small data sets (404, also compared).
      page: fc.oneof({ weight: 3, arbitrary: fc.constant(1) }, { weight: 2, arbitrary: fc.integer({ min: 2, max: 4 }) }),
      pageSize: fc.integer({ min: 1, max: 9 }),
    },
    { requiredKeys: ['filters'] },
  );
}


// ---------------------------------------------------------------------------

let api: TestApi;
let admin: TestUser;
/** The admin row, part of every users data set (its token makes the requests). */
let adminRecord: Rec;

beforeAll(async () => {
  api = await startApi({}, app);
  admin = await api.user('admin', { superuser: true });
  await api.database.db.updateTable('users').set({ email: '', date_joined: '2024-01-02T00:00:00.000Z' }).where('id', '=', admin.id).execute();
  adminRecord = { id: admin.id, username: 'admin', email: '', is_active: true, date_joined: '2024-01-02T00:00:00.000Z' };
});
afterAll(() => api?.close());

async function loadUsers(rows: UserRow[]): Promise<Rec[]> {
  await api.database.db.deleteFrom('users').where('id', '!=', admin.id).execute();
  const records: Rec[] = [adminRecord];
  for (const row of rows) {
    const inserted = await api.database.db
      .insertInto('users')
      .values({ ...row, is_active: row.is_active ? 1 : 0, password: 'scrypt$unused' })
      .returning('id')
      .executeTakeFirstOrThrow();
    records.push({ id: Number(inserted.id), ...row });
  }
  return records;
}

async function loadNotes(rows: NoteRow[]): Promise<Rec[]> {
  await api.database.db.deleteFrom('notes').execute();
  const records: Rec[] = [];
  for (const row of rows) {
    const flag = row.flag === null ? null : row.flag ? 1 : 0;
    const inserted = await api.database.db.insertInto('notes').values({ ...row, flag }).returning('id').executeTakeFirstOrThrow();
    records.push({ id: Number(inserted.id), ...row });
  }
  return records;
}

async function loadItems(rows: ItemRow[]): Promise<Rec[]> {
  await api.database.db.deleteFrom('items').execute();
  const records: Rec[] = [];
  for (const row of rows) {
    const inserted = await api.database.db.insertInto('items').values(row).returning('id').executeTakeFirstOrThrow();
    records.push({ id: Number(inserted.id), ...row });
  }
  return records;
}

async function compare(spec: Spec, records: Rec[], query: QuerySpec): Promise<void> {
  const params = queryParams(query);
  const url = `/api/v1/${spec.name}/?${new URLSearchParams(params).toString()}`;
  const expected = expectedPage(spec, records, query, params);
  const reply = await api.request('GET', url, { token: admin.token });
  const context = `GET ${decodeURIComponent(url)}\ndata: ${JSON.stringify(records)}\nreply: ${reply.body}`;
  expect(reply.status, context).toBe(expected.status);
  if (expected.status !== 200) return;
  const actual = {
    status: reply.status,
    count: reply.json.count,
    ids: reply.json.results.map((record: Rec) => record.id),
    next: linkParams(reply.json.next),
    previous: linkParams(reply.json.previous),
  };
  expect(actual, context).toEqual(expected);
}

/** Many queries per data set: loading data costs far more than a query. */
function property<T>(spec: Spec, dataArb: fc.Arbitrary<T>, load: (rows: T) => Promise<Rec[]>) {
  return fc.asyncProperty(dataArb, fc.gen(), async (rows, generate) => {
    const records = await load(rows);
    // Queries pick values from the data, so they are drawn after it (and still shrink).
    const queries = generate(() => fc.array(queryArb(spec, records), { minLength: 1, maxLength: 8 }));
    for (const query of queries) await compare(spec, records, query);
  });
}

describe('list pages equal the model of the query language', () => {
  it('on users (the service collection): Unicode case pairs, LIKE metacharacters, empty strings, day boundaries', async () => {
    await fc.assert(property(usersSpec, usersArb, loadUsers), { numRuns: RUNS, seed: SEED, endOnFailure: !SHRINK });
  }, 120_000);

  it('on a collection whose fields may be NULL (NULL sorts largest, never matches a comparison)', async () => {
    await fc.assert(property(notesSpec, notesArb, loadNotes), { numRuns: RUNS, seed: SEED, endOnFailure: !SHRINK });
  }, 120_000);

  it('on choices, dates, decimals and UUIDs (decimals compared and ordered as numbers, undeclared choices refused)', async () => {
    await fc.assert(property(itemsSpec, itemsArb, loadItems), { numRuns: RUNS, seed: SEED, endOnFailure: !SHRINK });
  }, 120_000);
});
