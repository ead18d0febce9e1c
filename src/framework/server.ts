/**
 * Serving an application: open the database, migrate, listen, and on SIGTERM
 * or SIGINT stop accepting, finish what is in flight, close the pool, exit 0.
 */
import { setFlagsFromString } from 'node:v8';
import type { FastifyInstance } from 'fastify';
import { openDatabase, type Database } from '../store/database.js';
import { buildApp, migrateApp, type AppDefinition } from './app.js';
import type { Config } from './config.js';

export function openConfiguredDatabase(config: Config): Database {
  return openDatabase(config.databaseUrl, {
    maxConnections: config.maxConnections,
    maxIdleConnections: config.maxIdleConnections,
  });
}

/**
 * V8 pretenures an allocation site (allocates its objects straight in the old generation) once
 * enough of them survive a young collection. Under 50 concurrent requests the rows, strings and
 * query nodes of the requests in flight do survive one, so their sites get pretenured and every
 * later request's garbage goes to the old generation, which only a full collection clears: on the
 * posts list that was a 90 MB saw-tooth of RSS and a quarter more CPU per request
 * (docs/performance.md). The flag only gates the feedback V8 gathers during collections, so it
 * takes effect when set at run time; a deployer who passes it to node keeps their choice.
 */
function keepRequestGarbageYoung(): void {
  if (process.execArgv.some((flag) => flag.includes('allocation-site-pretenuring'))) return;
  setFlagsFromString('--no-allocation-site-pretenuring');
}

export async function serve(definition: AppDefinition, config: Config): Promise<FastifyInstance> {
  keepRequestGarbageYoung();
  const database = openConfiguredDatabase(config);
  const applied = await migrateApp(database, definition);
  const app = await buildApp(definition, { database, config });
  if (applied.length > 0) app.log.info({ migrations: applied }, 'migrations applied');
  app.addHook('onClose', async () => database.close());
  await app.listen({ port: config.port, host: config.host });

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  return app;
}
