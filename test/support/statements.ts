/** The statements an app sends to its database, recorded (for tests that count round trips). */
import type { KyselyPlugin } from 'kysely';
import type { StoreDatabase } from '../../src/store/connection/database.js';

/** `database` with every statement the app sends pushed onto `sent`: precompiled ones through `run`, the rest through Kysely. */
export function recording(sent: string[]): (database: StoreDatabase) => StoreDatabase {
  return (database) => {
    // Kysely also transforms the queries it only compiles: a statement counts once its result comes back.
    const compiled = new WeakMap<object, string>();
    const recorder: KyselyPlugin = {
      transformQuery: ({ node, queryId }) => {
        compiled.set(queryId, database.db.getExecutor().compileQuery(node, queryId).sql);
        return node;
      },
      transformResult: async ({ result, queryId }) => {
        sent.push(compiled.get(queryId)!);
        return result;
      },
    };
    return {
      ...database,
      db: database.db.withPlugin(recorder),
      run: async (text, parameters, options) => {
        const rows = await database.run(text, parameters, options);
        sent.push(text);
        return rows;
      },
    };
  };
}
