/** Whether the database answers: resolves once it has run a trivial query, else rejects with why. */
import { storeDatabase, type Database } from './database.js';

export async function ping(database: Database): Promise<void> {
  await storeDatabase(database).db.selectNoFrom((eb) => eb.lit(1).as('ok')).execute();
}
