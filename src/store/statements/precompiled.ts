/**
 * Queries built and compiled once, then run with new values: the hot,
 * fixed-shape queries (a record by id, a credential by hash, a write of the
 * same columns) skip Kysely's per-call building and compiling, and its
 * executor. Values stand in as placeholders while the query is built
 * (store/statements/placeholder.ts), so the compiled SQL and the order of its parameters
 * are Kysely's own. Inside a transaction a query is built with its values and
 * run by Kysely; so is one whose build reads a restricted table for a request
 * (its conditions are that request's: see store/conditions/visibility.ts).
 */
import type { CompiledQuery, Compilable } from 'kysely';
import { storeDatabase, type Database, type RunOptions } from '../connection/database.js';
import { Placeholder } from './placeholder.js';
import { consulting } from '../conditions/visibility.js';

/** A query builder, run by Kysely. */
interface Executable<R> {
  execute(): Promise<R[]>;
}

/** Runs the query with `values` in the order of its placeholders. */
export type Precompiled<R> = (database: Database, values: readonly unknown[]) => Promise<R[]>;

interface Compiled<R> {
  readonly query: CompiledQuery<R>;
  /** Whether the compiled parameters are the placeholders, each once, in order: then the values are the parameters as they come. */
  readonly valuesInOrder: boolean;
}

/** What a query built for a request keeps: its compiled form, or that it is built again for every request (it reads a restricted table). */
type Kept<R> = Compiled<R> | 'per request';

/**
 * `build` receives one placeholder per value it declares (or `count`, when it takes them as a rest
 * parameter); the compiled query is kept per dialect, and run with `options`.
 */
export function precompiled<R>(
  build: (database: Database, ...placeholders: Placeholder[]) => Compilable<R>,
  count = build.length - 1,
  options?: RunOptions,
): Precompiled<R> {
  const compiled = new Map<string, Kept<R>>();
  // Kept apart for requests, by the app's restricted tables: what a request may not see is not known to a build without them.
  const compiledForRequests = new WeakMap<ReadonlySet<string>, Map<string, Kept<R>>>();
  const placeholders = Array.from({ length: count }, (_, index) => new Placeholder(index));
  const withValues = (database: Database, values: readonly unknown[]) => (build(database, ...(values as Placeholder[])) as unknown as Executable<R>).execute();
  // Not async: the driver's promise is handed on as it is, without one more layer per query.
  return (database, values) => {
    // Inside a transaction the query must run on its connection: built with its values and run by Kysely, as any query there.
    if (storeDatabase(database).db.isTransaction) return withValues(database, values);
    const restricted = database.visibility?.restricted;
    let kept = compiled;
    if (restricted) {
      let forRequests = compiledForRequests.get(restricted);
      if (!forRequests) compiledForRequests.set(restricted, (forRequests = new Map()));
      kept = forRequests;
    }
    let found = kept.get(database.dialect);
    if (!found) {
      const { built, consulted } = consulting(() => build(database, ...placeholders));
      if (consulted) found = 'per request';
      else {
        const query = built.compile();
        const valuesInOrder =
          query.parameters.length === count && query.parameters.every((parameter, index) => parameter instanceof Placeholder && parameter.plain && parameter.index === index);
        found = { query, valuesInOrder };
      }
      kept.set(database.dialect, found);
    }
    if (found === 'per request') return withValues(database, values);
    const { query } = found;
    // The values themselves where they are the parameters: no copy per query.
    const parameters = found.valuesInOrder ? values : query.parameters.map((parameter) => (parameter instanceof Placeholder ? parameter.valueIn(values) : parameter));
    return database.run(query.sql, parameters, options) as Promise<R[]>;
  };
}
