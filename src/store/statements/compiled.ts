/**
 * The one cache of compiled statements. Every statement the store runs again and again (a record by
 * id, a credential's user, a list's count, page and keyset batches, a write of the same columns) is
 * built by Kysely once per owner and shape, compiled, and run after that with new values, skipping
 * Kysely's per-call building and compiling, and its executor. Values stand in as placeholders while
 * the statement is built (placeholder.ts), so the compiled SQL and the order of its parameters are
 * Kysely's own.
 *
 * One key rule: the owner is the object whose statements they are (a selection, a companion query),
 * held weakly, so a selection made for one request takes its statements with it; the shape is a
 * string naming everything the SQL depends on apart from the bound values (the columns a write sets,
 * a list's filters and lookups: list-shape.ts), objects in it by `identityOf`. One bound: past
 * SHAPES_PER_OWNER shapes an owner's statements are dropped and compiled again as asked. One place to
 * measure it: `compiledStatementCounts`.
 *
 * Inside a transaction a compiled statement runs on the transaction's connection through Kysely's
 * executor. One whose build read a scoped table's scopes for a request is built with its values
 * each time (its conditions are that request's: see ../conditions/scopes.ts).
 */
import type { CompiledQuery, Compilable } from 'kysely';
import type { TableScopes } from '../../core/list-query.js';
import { storeDatabase, type Database, type RunOptions } from '../connection/database.js';
import { Placeholder } from './placeholder.js';

/** Runs the statement with `values` in the order of its placeholders. */
export type Compiled<R> = (database: Database, values: readonly unknown[]) => Promise<R[]>;

/** What builds a statement: one placeholder per value it declares. */
export type Build<R> = (database: Database, ...placeholders: Placeholder[]) => Compilable<R>;

/** Past this many shapes of one owner, its statements are dropped (the few hot ones are compiled again at once). */
export const SHAPES_PER_OWNER = 200;

const byOwner = new WeakMap<object, Map<string, Compiled<unknown>>>();
const counts = { compiled: 0, dropped: 0, perRequest: 0 };

/** What the cache has done since the process started: statements compiled, dropped past the bound, built per request. */
export const compiledStatementCounts = (): Readonly<typeof counts> => ({ ...counts });

const identities = new WeakMap<object, number>();
let given = 0;

/** A number for an object a shape names by identity (a source's filters, a companion's query): the same object, the same number. */
export function identityOf(object: object | undefined): number | '' {
  if (!object) return '';
  let id = identities.get(object);
  if (id === undefined) identities.set(object, (id = ++given));
  return id;
}

/**
 * The statement of `owner` for `shape`, built by `build` from `count` placeholders (its declared
 * ones by default) the first time it is asked for, and run with `options`.
 */
export function compiledStatement<R>(owner: object, shape: string, build: Build<R>, count = build.length - 1, options?: RunOptions): Compiled<R> {
  let shapes = byOwner.get(owner);
  if (!shapes) byOwner.set(owner, (shapes = new Map()));
  let statement = shapes.get(shape) as Compiled<R> | undefined;
  if (!statement) {
    if (shapes.size >= SHAPES_PER_OWNER) {
      counts.dropped += shapes.size;
      shapes.clear();
    }
    statement = compile(build, count, options);
    shapes.set(shape, statement as Compiled<unknown>);
  }
  return statement;
}

/** A query builder, run by Kysely. */
interface Executable<R> {
  execute(): Promise<R[]>;
}

interface Kept<R> {
  readonly query: CompiledQuery<R>;
  /** Whether the compiled parameters are the placeholders, each once, in order: then the values are the parameters as they come. */
  readonly valuesInOrder: boolean;
}

/**
 * `database` as `build` sees it, telling `consulted` when the build asks for a scoped table's
 * scopes: what it built then holds for this request alone.
 */
function watched(database: Database, scopes: TableScopes, consulted: () => void): Database {
  const { scopedTables } = scopes;
  return { ...database, scopes: { scopedTables, scopesOf: (table) => (consulted(), scopes.scopesOf(table)) } };
}

/** The statement compiled once per dialect, and for requests once per set of scoped tables (what a build without them cannot know). */
function compile<R>(build: Build<R>, count: number, options?: RunOptions): Compiled<R> {
  const compiled = new Map<string, Kept<R> | 'per request'>();
  const compiledForRequests = new WeakMap<ReadonlySet<string>, Map<string, Kept<R> | 'per request'>>();
  const placeholders = Array.from({ length: count }, (_, index) => new Placeholder(index));
  const withValues = (database: Database, values: readonly unknown[]) => (build(database, ...(values as Placeholder[])) as unknown as Executable<R>).execute();
  // Not async: the driver's promise is handed on as it is, without one more layer per query.
  return (database, values) => {
    const { scopes } = database;
    let kept = compiled;
    if (scopes) {
      let forRequests = compiledForRequests.get(scopes.scopedTables);
      if (!forRequests) compiledForRequests.set(scopes.scopedTables, (forRequests = new Map()));
      kept = forRequests;
    }
    let found = kept.get(database.dialect);
    if (!found) {
      let consulted = false;
      const built = build(scopes ? watched(database, scopes, () => (consulted = true)) : database, ...placeholders);
      if (consulted) {
        found = 'per request';
        counts.perRequest++;
      } else {
        const query = built.compile();
        const valuesInOrder =
          query.parameters.length === count && query.parameters.every((parameter, index) => parameter instanceof Placeholder && parameter.plain && parameter.index === index);
        found = { query, valuesInOrder };
        counts.compiled++;
      }
      kept.set(database.dialect, found);
    }
    if (found === 'per request') return withValues(database, values);
    const { query } = found;
    // The values themselves where they are the parameters: no copy per query.
    const parameters = found.valuesInOrder ? values : query.parameters.map((parameter) => (parameter instanceof Placeholder ? parameter.valueIn(values) : parameter));
    const { db } = storeDatabase(database);
    // Inside a transaction the statement runs on the transaction's connection, through Kysely's executor.
    if (db.isTransaction) return db.executeQuery<R>({ ...query, parameters }).then(({ rows }) => rows);
    return database.run(query.sql, parameters, options) as Promise<R[]>;
  };
}
