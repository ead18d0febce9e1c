/** The statements an app sends to its database, recorded (for tests that count round trips). */
import type { KyselyPlugin } from 'kysely';
import type { Database } from '../../src/framework/index.js';

/** `database` with every statement the app sends pushed onto `sent`: precompiled ones through `run`, the rest through Kysely. */
export function recording(sent: string[]): (database: Database) => Database {
  return (database) => {
    // Kysely also transforms the queries it only compiles: a statement counts once its result comes back.
    const compiled = new WeakMap<object, string>();
    const recorder: KyselyPlugin = {
      transformQuery: ({ node, queryId }) => {
        compiled.set(queryId, database.db.getExecutor().compileQuery(node, queryId).sql);
        return node;
      },
      transformResult: async ({ result, queryId }) => {
        // A precompiled query run inside a transaction reaches Kysely already compiled.
        sent.push(compiled.get(queryId) ?? '(precompiled)');
        return result;
      },
    };
    return {
      ...database,
      db: database.db.withPlugin(recorder),
      run: (text, parameters) => {
        sent.push(text);
        return database.run(text, parameters);
      },
    };
  };
}
