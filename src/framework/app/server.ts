/**
 * Serving an application: open the database, migrate, check it against the declarations, listen, and on SIGTERM
 * or SIGINT stop accepting, finish what is in flight, close the pool, exit 0.
 */
import { setFlagsFromString } from 'node:v8';
import type { FastifyInstance } from 'fastify';
import { openDatabase, type Database } from '../../store/database.js';
import { buildApp } from './app.js';
import { migrateApp, type AppDefinition } from './definition.js';
import { repliesSent } from './plugins/request-identity.js';
import type { Config } from './config.js';
import { assertSchemaMatches } from './schema.js';

export function openConfiguredDatabase(config: Config): Database {
  return openDatabase(config.databaseUrl, {
    maxConnections: config.maxConnections,
    maxIdleConnections: config.maxIdleConnections,
    connectionWaitMillis: config.connectionWaitMs,
    preparedStatements: config.preparedStatements,
  });
}

/**
 * Two V8 heuristics that suit a browser tab better than a request server, tuned at start (both
 * are read at each collection, so they take effect when set at run time; a deployer who passes
 * either to node keeps their choice). The measurements are in docs/performance.md (Memory):
 * - Allocation-site pretenuring: the rows, strings and query nodes of the requests in flight
 *   survive a young collection, so V8 starts allocating those sites' objects straight in the old
 *   generation, where only a full collection clears them: RSS saws up and down, and every request
 *   costs more CPU.
 * - The old generation's growth factor: after start-up's collection V8 lets the old generation
 *   grow to several times the live heap before the next full one; a smaller factor keeps the peak
 *   RSS well lower, at no measurable CPU cost.
 */
const GC_FLAGS = ['--no-allocation-site-pretenuring', '--heap-growing-percent=50'];

/** `--heap_growing_percent=30`, `--no-allocation-site-pretenuring` → the setting named, however node was given it. */
const flagName = (flag: string): string => flag.replaceAll('_', '-').replace(/^--(no-?)?/, '').replace(/=.*/, '');

function tuneGarbageCollection(): void {
  const given = new Set(process.execArgv.map(flagName));
  for (const flag of GC_FLAGS) if (!given.has(flagName(flag))) setFlagsFromString(flag);
}

export async function serve(definition: AppDefinition, config: Config): Promise<FastifyInstance> {
  tuneGarbageCollection();
  const database = openConfiguredDatabase(config);
  const applied = await migrateApp(database, definition);
  // A table or column the declarations name but the database lacks would be a 500 on the first write: refuse now.
  await assertSchemaMatches(database, definition);
  const app = await buildApp(definition, { database, config });
  if (applied.length > 0) app.log.info({ migrations: applied }, 'migrations applied');
  app.addHook('onClose', async () => {
    const unfinished = await repliesSent(app);
    if (unfinished > 0) app.log.warn({ requests: unfinished }, 'closing the database under requests still being handled');
    await database.close();
  });
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
