/** Another writer, for tests of concurrent writes: a change made right after the app's next read of a table. */
import type { StoreDatabase } from '../../src/store/connection/database.js';

export interface Interloper {
  /** Makes `change` once, right after the app's next read of the table. */
  next(change: () => Promise<unknown>): void;
  /** Whether the change is still waiting for that read. */
  readonly waiting: boolean;
  /** The app's database, with the change made after the read. */
  database(database: StoreDatabase): StoreDatabase;
}

export function interloper(table: string): Interloper {
  let pending: (() => Promise<unknown>) | undefined;
  const read = new RegExp(`^select .*from "${table}"`, 'i');
  return {
    next: (change) => {
      pending = change;
    },
    get waiting() {
      return pending !== undefined;
    },
    database: (database) => ({
      ...database,
      async run(text, parameters) {
        const rows = await database.run(text, parameters);
        const change = pending;
        if (change && read.test(text)) {
          pending = undefined;
          await change();
        }
        return rows;
      },
    }),
  };
}
