/**
 * Queries built and compiled once, then run with new values: the hot,
 * fixed-shape queries (a record by id, a credential by hash, a write of the
 * same columns) skip Kysely's per-call building and compiling, and its
 * executor. Values stand in as placeholders while the query is built, so the
 * compiled SQL and the order of its parameters are Kysely's own. Inside a
 * transaction a query is built with its values and run by Kysely.
 */
import type { CompiledQuery, Compilable } from 'kysely';
import { storeDatabase, type Database } from './database.js';

/** Stands in for the query's `index`th argument while it is built. */
export class Placeholder {
  constructor(readonly index: number) {}
}

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

/**
 * `build` receives one placeholder per value it declares (or `count`, when it takes them as a rest
 * parameter); the compiled query is kept per dialect.
 */
export function precompiled<R>(
  build: (database: Database, ...placeholders: Placeholder[]) => Compilable<R>,
  count = build.length - 1,
): Precompiled<R> {
  const compiled = new Map<string, Compiled<R>>();
  const placeholders = Array.from({ length: count }, (_, index) => new Placeholder(index));
  // Not async: the driver's promise is handed on as it is, without one more layer per query.
  return (database, values) => {
    // Inside a transaction the query must run on its connection: built with its values and run by Kysely, as any query there.
    if (storeDatabase(database).db.isTransaction) return (build(database, ...(values as Placeholder[])) as unknown as Executable<R>).execute();
    let found = compiled.get(database.dialect);
    if (!found) {
      const query = build(database, ...placeholders).compile();
      const valuesInOrder = query.parameters.length === count && query.parameters.every((parameter, index) => parameter instanceof Placeholder && parameter.index === index);
      found = { query, valuesInOrder };
      compiled.set(database.dialect, found);
    }
    const { query } = found;
    // The values themselves where they are the parameters: no copy per query.
    const parameters = found.valuesInOrder ? values : query.parameters.map((parameter) => (parameter instanceof Placeholder ? values[parameter.index] : parameter));
    return database.run(query.sql, parameters) as Promise<R[]>;
  };
}
