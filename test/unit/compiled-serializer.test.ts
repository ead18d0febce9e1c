/**
 * The compiled write and read paths answer exactly as the interpreted ones. The serializer
 * (framework/declare/compiled-serializer.ts):
 * the same values, in the same key order, or the same 400 with the same details in the same order,
 * for every field kind, every error a body can have and every write mode; and the same records,
 * key for key, from rows as either database's driver hands them back (PostgreSQL's Dates and
 * booleans, SQLite's text and 0/1). A write's values → the driver's parameters
 * (store/write/driver-values.ts): the same columns and parameters as toDriverValues for every body
 * any mode parses, and the same error for a name that is no field. A row read → the record
 * (store/read/records.ts, compileAssembly): the same record, key for key, for nested records with
 * their aggregates and every kind of aggregate, as either driver hands them back, with and without
 * the columns a statement carries beside it. test/api/compiled-writes.test.ts runs both ways over
 * HTTP, on both databases.
 */
import { describe, expect, it, vi } from 'vitest';
import { computed, fields, model, serializer, type Serializer } from '../../src/framework/index.js';
import { passwordField } from '../../src/core/fields.js';
import { ApiError } from '../../src/framework/base/errors.js';
import { interpretRender, type RenderStep } from '../../src/framework/declare/compiled-serializer.js';
import type { WriteContext, WriteMode } from '../../src/framework/declare/serializer.js';
import type { Aggregate, Row, Selection } from '../../src/core/rows.js';
import { driverShape, toDriverValues } from '../../src/store/write/driver-values.js';
import { compileAssembly, interpretAssembly } from '../../src/store/read/records.js';

const CREATED = new Date('2024-05-01T10:00:00.000Z');

const Owner = model('users', { id: fields.id(), username: fields.string({ maxLength: 30 }) });
const owners = serializer(Owner, { fields: ['id', 'username'] });

const Thing = model('things', {
  id: fields.id(),
  title: fields.string({ maxLength: 10, minLength: 2, pattern: /^[a-z ]+$/ }),
  body: fields.text({ blank: true, default: '' }),
  email: fields.email({ nullable: true }),
  flag: fields.boolean({ default: false }),
  at: fields.timestamp({ nullable: true, minValue: '2000-01-01T00:00:00Z', maxValue: new Date('2100-01-01T00:00:00Z') }),
  count: fields.integer({ bits: 32, minValue: 0, maxValue: 1000, validators: [(value) => (value === 13 ? 'Unlucky.' : undefined)] }),
  later: fields.integer({ nullable: true, validators: [async (value) => (value === 7 ? 'Seven, later.' : undefined)] }),
  level: fields.choice(['low', 'high']),
  day: fields.date({ nullable: true }),
  time: fields.time({ nullable: true }),
  spent: fields.duration({ nullable: true }),
  cost: fields.decimal({ digits: 6, places: 2, nullable: true }),
  ratio: fields.float({ nullable: true }),
  big: fields.bigint({ nullable: true }),
  ref: fields.uuid({ nullable: true }),
  meta: fields.json({ shape: 'object', nullable: true }),
  tags: fields.json({ shape: 'array', nullable: true }),
  home: fields.url({ nullable: true }),
  slug: fields.slug({ nullable: true }),
  owner_id: fields.foreignKey('users', { nullable: true, requestingUserOnly: { unless: 'things.change' } }),
  secret: fields.string({ nullable: true }),
  password: passwordField(async (password) => `hashed:${password}`, { required: 'create' }),
  doc: fields.file({ nullable: true }),
  created_at: fields.timestamp({ default: () => CREATED }),
});

const things = serializer(Thing, {
  fields: [
    'id', 'title', 'body', 'email', 'flag', 'at', 'count', 'later', 'level', 'day', 'time', 'spent', 'cost', 'ratio', 'big', 'ref',
    'meta', 'tags', 'home', 'slug', 'owner', 'owner_id', 'secret', 'password', 'doc', 'created_at', 'shout',
  ],
  rename: { body: 'content', at: 'when' },
  readOnly: ['created_at'],
  hidden: ['secret'],
  writeOnly: ['password'],
  nested: { owner: { source: 'owner_id', serializer: owners } },
  computed: { shout: computed.from((row) => String(row.title).toUpperCase(), { reads: ['title'] }) },
  format: { ratio: (stored) => (stored === null ? null : `${String(stored)}!`) },
});

/** The same serializer, interpreted: no compiled parse, the renderer that walks its steps. */
function interpreted(compiled: Serializer): Serializer {
  const internals = compiled as unknown as { parseFields: unknown; renderSteps: readonly RenderStep[] };
  return Object.assign(Object.create(compiled) as Serializer, { parseFields: undefined, renderRecord: interpretRender(internals.renderSteps) });
}
const plain = interpreted(things);

const context: WriteContext = { userId: 5, hasPermission: async (name) => name === 'nothing' };

/** A value, a Date and a bigint included, as text that keeps every key's order. */
const exact = (value: unknown): string =>
  JSON.stringify(value, function (key, inner: unknown) {
    const raw = (this as Record<string, unknown>)[key];
    if (raw instanceof Date) return `Date ${raw.toISOString()}`;
    return typeof inner === 'bigint' ? `bigint ${String(inner)}` : inner;
  });

/** What a parse gives: its values, or the error it throws (status, code, message and details), as exact text. */
async function outcome(subject: Serializer, body: unknown, mode: WriteMode): Promise<string> {
  try {
    return `values ${exact(await subject.parseBody(body, mode, context))}`;
  } catch (error) {
    if (!(error instanceof ApiError)) return `thrown ${String(error)}`;
    return `refused ${error.status} ${error.code} ${error.message} ${exact(error.details)}`;
  }
}

const valid: Row = { title: 'ab cd', content: 'x', level: 'low', count: 3, password: 'pw' };

/** For each body field, values of every sort: valid ones, and each error its kind knows. */
const candidates: Record<string, unknown[]> = {
  title: ['ok', 'a', 'ABC', 'abcdefghijklmnop', '', 3, null, true, ['ab'], { a: 1 }, 'a\u0000b'],
  content: ['', 'text', null, 5, 'é'.repeat(3)],
  email: ['a@example.com', 'nope', '', null, 1],
  flag: [true, false, 'true', 1, null],
  when: ['2024-01-02T03:04:05Z', '2024-01-02 03:04:05.123456+02:00', '1999-12-31T23:59:59Z', '2100-01-01T00:00:01Z', '2024-13-01T00:00:00Z', 'yesterday', 0, null],
  count: [0, 1000, 1001, -1, 13, 1.5, '7', 2 ** 40, null],
  later: [7, 8, null, 'x'],
  level: ['low', 'high', 'mid', '', null, 1],
  day: ['2024-02-29', '2023-02-29', '24-1-1', null],
  time: ['09:30', '25:00', '09:30:00.123456', null],
  spent: ['PT1M', 'P1DT2H', 'soon', null],
  cost: ['12.50', 12.5, '1234567.00', '1.234', 'abc', null],
  ratio: [1.5, 'NaN', Number.MAX_VALUE, null, '2'],
  big: ['9007199254740993', 12, '-9223372036854775809', 1.5, null],
  ref: ['6F1C2B4E-8A3D-4C5E-9F70-1A2B3C4D5E6F', '{6f1c2b4e8a3d4c5e9f701a2b3c4d5e6f}', 'not-a-uuid', null],
  meta: [{ a: [1, { b: 2 }] }, [1], 'text', null],
  tags: [['a', 'b'], { a: 1 }, null],
  home: ['https://example.com/a', 'javascript:alert(1)', 'nope', null],
  slug: ['a-b_c', 'a b', '', null],
  owner_id: [5, 6, '5', 'x', null, -1],
  secret: ['s', null, 4],
  password: ['pw', '', null, 4, 'p'.repeat(5000)],
  doc: [null, 'file.txt', { name: 'x' }],
  // Read-only, unknown, the model's names of renamed fields, and names an object literal treats apart.
  created_at: ['2024-01-01T00:00:00Z'],
  id: [4],
  body: ['x'],
  at: ['2024-01-02T03:04:05Z'],
  owner: [{ id: 1 }],
  shout: ['x'],
  unknown: [1],
  constructor: [1],
  toString: ['x'],
};

const modes: WriteMode[] = ['create', 'update', 'partial_update'];

describe('the compiled serializer against the interpreted one', () => {
  it('is compiled (else this would compare the interpreted one with itself)', () => {
    expect((things as unknown as { parseFields: unknown }).parseFields).toBeTypeOf('function');
    expect((things as unknown as { renderRecord: unknown }).renderRecord).not.toBe((plain as unknown as { renderRecord: unknown }).renderRecord);
  });

  it('parses every field kind, each value alone and over a valid body, in every mode, to the same values or errors', async () => {
    let compared = 0;
    for (const mode of modes) {
      for (const [key, values] of Object.entries(candidates)) {
        for (const value of values) {
          for (const body of [{ [key]: value }, { ...valid, [key]: value }]) {
            expect(await outcome(things, body, mode), `${mode} ${exact(body)}`).toBe(await outcome(plain, body, mode));
            compared++;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(500);
  });

  it('answers alike for bodies that are no object, empty, carry several errors, or keys an object treats apart', async () => {
    const everyError = Object.fromEntries(Object.entries(candidates).map(([key, values]) => [key, values.at(-1)]));
    const bodies: unknown[] = [
      null, [], 'text', 3, true, {}, valid, everyError,
      JSON.parse('{"__proto__": {"title": "ab"}, "title": "ab"}'),
      Object.assign(Object.create(null) as Row, valid),
      Object.create(valid) as Row,
      { ...valid, later: 7, count: 13, title: 'A', password: '' },
    ];
    for (const mode of modes) for (const body of bodies) expect(await outcome(things, body, mode), `${mode} ${exact(body)}`).toBe(await outcome(plain, body, mode));
  });

  it('renders rows as PostgreSQL and SQLite hand them back to the same records, key for key', () => {
    const common = {
      id: 1, title: 'ab', body: '', email: null, count: 3, later: null, level: 'low', cost: '12.50', ratio: 1.5, ref: '6f1c2b4e-8a3d-4c5e-9f70-1a2b3c4d5e6f',
      meta: '{"a":1}', tags: '["x"]', home: null, slug: 's', owner_id: 5, secret: 'hidden', password: 'hashed:pw', doc: null,
      owner: { id: 5, username: 'u' }, shout: 'ignored',
    };
    const rows: Row[] = [
      { ...common, flag: true, at: new Date('2024-01-02T03:04:05.000Z'), day: '2024-02-29', time: '09:30:00', spent: '01:00:00', big: 9007199254740993n, created_at: CREATED },
      { ...common, flag: 1, at: '2024-01-02T03:04:05.000Z', day: '2024-02-29', time: '09:30:00', spent: 3600, big: 12, created_at: '2024-05-01T10:00:00.000Z' },
      { ...common, flag: 0, at: null, day: null, time: null, spent: null, big: null, created_at: CREATED, owner: null, ratio: null, cost: null, meta: null, tags: null },
    ];
    for (const row of rows) {
      const record = things.render(row, { user: null });
      expect(exact(record)).toBe(exact(plain.render(row, { user: null })));
      expect(Object.keys(record)).toEqual(things.shownFields);
    }
  });
});

describe('where the process forbids making code from text', () => {
  it('serializers stay interpreted, and answer as they do compiled', async () => {
    // As node --disallow-code-generation-from-strings makes `new Function` throw.
    vi.stubGlobal('Function', function refused() {
      throw new EvalError('Code generation from strings disallowed for this context');
    });
    let uncompiled: Serializer;
    try {
      uncompiled = serializer(Thing, { fields: ['id', 'title', 'count', 'created_at'], readOnly: ['created_at'] });
    } finally {
      vi.unstubAllGlobals();
    }
    expect((uncompiled as unknown as { parseFields: unknown }).parseFields).toBeUndefined();
    const twin = serializer(Thing, { fields: ['id', 'title', 'count', 'created_at'], readOnly: ['created_at'] });
    for (const body of [{ title: 'ab', count: 2 }, { title: 'A', count: 13 }, {}]) {
      for (const mode of modes) expect(await outcome(uncompiled, body, mode)).toBe(await outcome(twin, body, mode));
    }
    const row = { id: 1, title: 'ab', count: 2, created_at: CREATED };
    expect(exact(uncompiled.render(row))).toBe(exact(twin.render(row)));
  });
});

/** Parameters as exact text, an undefined one told from null. */
const parametersText = (columns: readonly string[], parameters: readonly unknown[]): string => exact([columns, parameters.map((value) => (value === undefined ? 'undefined' : value))]);

/** A write's values → the parameters, both ways: the columns and parameters, or the error. */
function driverOutcome(values: Row): string {
  let interpreted: string;
  try {
    const driverValues = toDriverValues(Thing, values);
    interpreted = parametersText(Object.keys(driverValues), Object.values(driverValues));
  } catch (error) {
    interpreted = `thrown ${String(error)}`;
  }
  let compiled: string;
  try {
    const shape = driverShape(Thing, values);
    compiled = parametersText(shape.columns, shape.parameters(values));
  } catch (error) {
    compiled = `thrown ${String(error)}`;
  }
  expect(compiled, exact(values)).toBe(interpreted);
  return compiled;
}

describe("a write's parameters, compiled per set of columns, against toDriverValues", () => {
  it('gives the same columns and parameters for every body any mode parses, in their order', async () => {
    let compared = 0;
    for (const mode of modes) {
      for (const [key, values] of Object.entries(candidates)) {
        for (const value of values) {
          let parsed: Row;
          try {
            parsed = await things.parseBody({ ...valid, [key]: value }, mode, context);
          } catch {
            continue;
          }
          driverOutcome(parsed);
          // Each value null, the keys in another order, and a value left undefined.
          driverOutcome(Object.fromEntries(Object.keys(parsed).map((name) => [name, null])));
          driverOutcome(Object.fromEntries(Object.entries(parsed).reverse()));
          driverOutcome({ ...parsed, title: undefined });
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(100);
  });

  it('keeps one shape per set of columns, and refuses a name that is no field as toDriverValues does', () => {
    const values = { title: 'ab', count: 2 };
    expect(driverShape(Thing, { title: 'cd', count: 3 })).toBe(driverShape(Thing, values));
    expect(driverShape(Thing, { count: 3, title: 'cd' })).not.toBe(driverShape(Thing, values));
    expect(driverOutcome({ title: 'ab', nope: 1 })).toBe('thrown Error: things has no field "nope"');
    expect(driverOutcome(Object.assign(Object.create(null) as Row, values))).toBe(driverOutcome(values));
    expect(driverOutcome(Object.assign(Object.create({ inherited: 1 }) as Row, values))).toBe(driverOutcome(values));
    expect(driverOutcome({})).toBe(parametersText([], []));
  });
});

const aggregate = (name: string, kind: Aggregate['kind'], extra: Partial<Aggregate> = {}): Aggregate => ({ name, kind, table: 'others', via: 'thing_id', ...extra });

/** A selection with a nested record (with an aggregate of its own), a slug-like join, and an aggregate of every kind. */
const selection: Selection = {
  table: 'things',
  columns: ['id', 'title', 'owner_id', 'created_at'],
  joins: [
    { name: 'owner', table: 'users', via: 'owner_id', columns: ['id', 'username'], aggregates: [aggregate('posts', 'count')] },
    { name: 'tag', table: 'tags', via: 'tag_id', columns: ['id', 'slug'] },
  ],
  aggregates: [
    aggregate('replies', 'count'),
    aggregate('answered', 'exists'),
    aggregate('reply_ids', 'ids'),
    aggregate('names', 'ids', { text: true }),
    aggregate('total', 'sum', { of: ['cost'], value: { type: 'decimal', places: 2 } }),
    aggregate('mean', 'avg', { of: ['ratio'], value: { type: 'float' } }),
  ],
};

const assembled = (assemble: (row: Row) => Row, row: Row): string => exact(assemble(row));

describe("a row's assembly, compiled per selection, against the interpreted one", () => {
  const postgres: Row = {
    id: 1, title: 'ab', owner_id: 5, created_at: CREATED, owner__id: 5, owner__username: 'u', owner__posts: '3', tag__id: 2, tag__slug: 's',
    replies: '2', answered: true, reply_ids: '4,10', names: 'a,b', total: '12.5', mean: '1.25',
  };
  const sqlite: Row = {
    id: 1, title: 'ab', owner_id: 5, created_at: '2024-05-01T10:00:00.000Z', owner__id: 5, owner__username: 'u', owner__posts: 3, tag__id: null, tag__slug: null,
    replies: 0, answered: 0, reply_ids: null, names: '', total: 12.5, mean: null,
  };
  const missing: Row = { ...postgres, owner_id: null, owner__id: null, owner__username: null, owner__posts: '0', total: null };
  // A join's key read as undefined counts as no record, as null does.
  const undefinedKey: Row = { ...sqlite, tag__id: undefined, tag__slug: undefined };

  it('is compiled (else this would compare the interpreted one with itself)', () => {
    expect(compileAssembly(selection, new Set())).toBeTypeOf('function');
  });

  it('gives the same records, key for key, from rows as both drivers hand them back, nested records missing or not', () => {
    for (const row of [postgres, sqlite, missing, undefinedKey]) {
      const none = new Set<string>();
      expect(assembled(compileAssembly(selection, none)!, row)).toBe(assembled(interpretAssembly(selection, none), row));
    }
  });

  it('leaves out the columns a statement carried beside the record (a version, a count, an owner, a companion), wherever they come', () => {
    const dropped = new Set(['_version', '_companion__id']);
    for (const row of [
      { ...postgres, _version: '123' },
      { _companion__id: 9, ...sqlite, _version: '1' },
    ]) {
      expect(assembled(compileAssembly(selection, dropped)!, row)).toBe(assembled(interpretAssembly(selection, dropped), row));
    }
  });

  it('assembles a selection without joins or aggregates that drops a column, and one of its key alone', () => {
    const bare: Selection = { table: 'things', columns: ['id', 'title'], joins: [] };
    const count = new Set(['_count']);
    const row = { _count: '4', id: 1, title: 'ab' };
    expect(assembled(compileAssembly(bare, count)!, row)).toBe(assembled(interpretAssembly(bare, count), row));
    const key: Selection = { table: 'things', columns: ['id'], joins: [], aggregates: [aggregate('n', 'count')] };
    expect(assembled(compileAssembly(key, count)!, { id: 2, n: 0, _count: 1 })).toBe(assembled(interpretAssembly(key, count), { id: 2, n: 0, _count: 1 }));
  });
});

describe('where the process forbids making code from text, the store', () => {
  it('keeps parameters and assemblies interpreted, and answers as it does compiled', () => {
    const Plain = model('plain_things', { id: fields.id(), title: fields.string(), flag: fields.boolean(), at: fields.timestamp({ nullable: true }) });
    const values = { title: 'ab', flag: true, at: CREATED };
    vi.stubGlobal('Function', function refused() {
      throw new EvalError('Code generation from strings disallowed for this context');
    });
    let shape: ReturnType<typeof driverShape>;
    let assembly: ReturnType<typeof compileAssembly>;
    try {
      shape = driverShape(Plain, values);
      assembly = compileAssembly(selection, new Set());
    } finally {
      vi.unstubAllGlobals();
    }
    expect(assembly).toBeUndefined();
    expect(exact([shape.columns, shape.parameters(values)])).toBe(exact([Object.keys(values), Object.values(toDriverValues(Plain, values))]));
  });
});
