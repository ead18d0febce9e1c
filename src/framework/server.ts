/**
 * Serving an application: open the database, migrate, listen, and on SIGTERM
 * or SIGINT stop accepting, finish what is in flight, close the pool, exit 0.
 */
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

export async function serve(definition: AppDefinition, config: Config): Promise<FastifyInstance> {
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
