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

export type Precompiled<R> = (database: Database, ...values: unknown[]) => Promise<R[]>;

/**
 * `build` receives one placeholder per value it declares (or `count`, when it takes them as a rest
 * parameter); the compiled query is kept per dialect.
 */
export function precompiled<R>(
  build: (database: Database, ...placeholders: Placeholder[]) => Compilable<R>,
  count = build.length - 1,
): Precompiled<R> {
  const compiled = new Map<string, CompiledQuery<R>>();
  const placeholders = Array.from({ length: count }, (_, index) => new Placeholder(index));
  // Not async: the driver's promise is handed on as it is, without one more layer per query.
  return (database, ...values) => {
    // Inside a transaction the query must run on its connection: built with its values and run by Kysely, as any query there.
    if (storeDatabase(database).db.isTransaction) return (build(database, ...(values as Placeholder[])) as unknown as Executable<R>).execute();
    let query = compiled.get(database.dialect);
    if (!query) {
      query = build(database, ...placeholders).compile();
      compiled.set(database.dialect, query);
    }
    const parameters = query.parameters.map((parameter) => (parameter instanceof Placeholder ? values[parameter.index] : parameter));
    return database.run(query.sql, parameters) as Promise<R[]>;
  };
}
