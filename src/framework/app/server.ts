/**
 * Serving an application: open the database, migrate, check it against the declarations, listen, and on SIGTERM
 * drain, then stop accepting, finish what is in flight, close the pool, exit 0; on SIGINT (or, under npm,
 * when the process npm started for it is gone) the same without the drain.
 */
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import type { FastifyInstance } from 'fastify';
import { openDatabase, type Database, type DatabaseOptions } from '../../store/connection/database.js';
import { withReplicas } from '../../store/connection/replicas.js';
import { buildApp } from './app.js';
import { appliedNames, migrateFrameworkAndApp, type AppDefinition } from './definition.js';
import { repliesSent } from './plugins/request-identity.js';
import { beginDrain } from './plugins/draining.js';
import { growHeapForTransfers } from '../base/transfer-heap.js';
import type { Config } from './config.js';
import { assertSchemaMatches } from './declared-schema.js';

const poolOptions = (config: Config): DatabaseOptions => ({
  maxConnections: config.maxConnections,
  maxIdleConnections: config.maxIdleConnections,
  connectionWaitMillis: config.connectionWaitMs,
  preparedStatements: config.preparedStatements,
  sqliteReaderThreads: config.sqliteReaderThreads,
  sqliteReaderCacheKib: config.sqliteReaderCacheKib,
  sqliteCacheKib: config.sqliteCacheKib,
});

/** The primary alone: what migrations, `check` and the other commands use. */
export function openConfiguredDatabase(config: Config): Database {
  return openDatabase(config.databaseUrl, poolOptions(config));
}

/**
 * What `serve` reads and writes once migrated: the primary, with its replicas beside it when
 * DATABASE_REPLICA_URLS names some (each a pool of the primary's size).
 */
const withConfiguredReplicas = (primary: Database, config: Config): Promise<Database> =>
  config.replicaUrls.length === 0
    ? Promise.resolve(primary)
    : withReplicas(primary, config.replicaUrls, { ...poolOptions(config), maxLagMillis: config.replicaMaxLagMs, pollMillis: config.replicaPollMs });

/**
 * Garbage collection tuned for a request server rather than a browser tab (measured in
 * docs/performance.md, Memory): the objects of requests in flight are collected young, and the heap
 * grows less before a full collection, for a lower and steadier RSS at no measurable CPU cost.
 * While files move, a larger fixed growth (base/transfer-heap.ts; docs/performance.md, Files).
 * Set at run time, as both are read at each collection; a deployer who passes either to node keeps
 * their choice.
 */
const HEAP_GROWTH = { idle: '--heap-growing-percent=50', transferring: '--heap-growing-percent=200' };
const GC_FLAGS = ['--no-allocation-site-pretenuring', HEAP_GROWTH.idle];

/** `--heap_growing_percent=30`, `--no-allocation-site-pretenuring` → the setting named, however node was given it. */
const flagName = (flag: string): string => flag.replaceAll('_', '-').replace(/^--(no-?)?/, '').replace(/=.*/, '');

function tuneGarbageCollection(): void {
  const given = new Set(process.execArgv.map(flagName));
  for (const flag of GC_FLAGS) if (!given.has(flagName(flag))) setFlagsFromString(flag);
  if (!given.has(flagName(HEAP_GROWTH.idle))) growHeapForTransfers(HEAP_GROWTH);
}

/**
 * One serving process: migrates, checks the database against the declarations, then `buildApp` listening on
 * `config.port` and `config.host`, finishing its requests on SIGTERM (each of `restfold serve`'s `WORKERS`).
 */
export async function serve(definition: AppDefinition, config: Config): Promise<FastifyInstance> {
  tuneGarbageCollection();
  const primary = openConfiguredDatabase(config);
  const migrated = await migrateFrameworkAndApp(primary, definition);
  const applied = appliedNames(migrated);
  // A table or column the declarations name but the database lacks would be a 500 on the first write: refuse now.
  await assertSchemaMatches(primary, definition);
  // Migrated and checked on the primary alone; the replicas replay it.
  const database = await withConfiguredReplicas(primary, config);
  const app = await buildApp(definition, { database, config });
  if (applied.length > 0) app.log.info({ migrations: applied }, 'migrations applied');
  if (migrated.held.length > 0) app.log.info({ migrations: migrated.held }, 'migrations waiting for `restfold migrate --contract`');
  app.addHook('onClose', async () => {
    const unfinished = await repliesSent(app);
    if (unfinished > 0) app.log.warn({ requests: unfinished }, 'closing the database under requests still being handled');
    await database.close();
  });
  await app.listen({ port: config.port, host: config.host });
  onStopRequest(stopper(app, config.shutdownDrainMs));
  return app;
}

/**
 * How long requests in flight when the server stops accepting may go on before their connections
 * are closed (a slow upload, a long download): the stop is bounded, whatever the clients do.
 */
const IN_FLIGHT_GRACE_MS = 10_000;

/**
 * What stops `app`: SIGTERM (a deploy: the orchestrator's stop) drains first for `drainMs`
 * (plugins/draining.ts), then stops accepting, lets requests in flight finish, ends live streams
 * and closes the pool; SIGINT (Ctrl-C in a terminal) and a parent process gone skip the drain. A signal during the drain
 * ends it; one while closing changes nothing.
 */
function stopper(app: FastifyInstance, drainMs: number): (reason: string) => void {
  let drain: NodeJS.Timeout | undefined;
  let closing = false;
  const close = (): void => {
    clearTimeout(drain);
    closing = true;
    app.log.info('closing: no new connections; finishing the requests in flight');
    setTimeout(() => app.server.closeAllConnections(), IN_FLIGHT_GRACE_MS).unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  return (reason) => {
    if (closing) return;
    if (drain) return close();
    // Only SIGTERM drains: a parent gone (npm's, which exits at once) waits for nothing.
    const draining = reason === 'SIGTERM' ? drainMs : 0;
    app.log.info({ signal: reason, drain_ms: draining }, 'shutting down');
    if (draining === 0) return close();
    beginDrain(app);
    drain = setTimeout(close, draining);
  };
}

/** How often a server looks for its parent process. */
const PARENT_CHECK_MS = 1000;

/** The shells a package manager runs a command in (`sh -c`). */
const SHELLS = new Set(['sh', 'dash', 'bash', 'zsh', 'ash']);

/** A process's name, where the system tells it (Linux's /proc). */
function processName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** A process's parent's id, where the system tells it (Linux's /proc; the name in stat's parentheses may hold any character). */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/**
 * Calls `stop` each time the process is told to stop: SIGTERM, SIGINT, or, under a package manager, its
 * parent process gone. `npx restfold serve` (and an npm script without `exec`) runs the server
 * under `sh -c` under npm: npm passes a SIGTERM on to the shell, which dies without passing it on,
 * and the server, re-parented, would serve on with nobody to stop it. Node cannot ask the kernel
 * for a signal when the parent dies, so the parent's id is checked instead. Only under a package
 * manager (npm, npx, yarn and pnpm set npm_execpath), whose child lives as long as npm waits for
 * it: a server started in the background by a script that then exits keeps serving. A SIGHUP to
 * npm ends npm alone, its shell living on as the server's parent: where the parent is that shell,
 * its own parent is watched too (on Linux, which tells a process's parent). SIGHUP to the server
 * keeps Node's default (the process ends), so that `nohup`, which has it ignored, still works.
 */
export function onStopRequest(stop: (reason: string) => void): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop(signal));
  if (process.env.npm_execpath === undefined) return;
  const parent = process.ppid;
  const shellParent = SHELLS.has(processName(parent) ?? '') ? parentOf(parent) : undefined;
  const watch = setInterval(() => {
    if (process.ppid === parent && (shellParent === undefined || parentOf(parent) === shellParent)) return;
    clearInterval(watch);
    stop('parent process exited');
  }, PARENT_CHECK_MS);
  watch.unref();
}
