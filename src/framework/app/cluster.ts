/**
 * WORKERS: several processes serving one port (node:cluster). The primary
 * migrates once and compares the database with the declarations, then forks
 * the workers (each runs `serve`, whose migration check then finds nothing to do). A worker that dies after it was serving is
 * replaced; one that dies while starting stops the whole service, since a
 * start-up failure (a taken port, a bad setting) would only repeat. SIGTERM or
 * SIGINT to the primary (or, under npm, its parent process gone: onStopRequest)
 * is passed on to every worker (each drains on SIGTERM: server.ts), then it exits
 * once they all have.
 * DB_MAX_CONNECTIONS and DB_MAX_IDLE_CONNECTIONS are the service's: each worker is given its share
 * (at least one connection), and a replacement the share of the worker it replaces.
 */
import cluster, { type Worker } from 'node:cluster';
import { appliedNames, migrateFrameworkAndApp, type AppDefinition } from './definition.js';
import { shares, workerCount, type Config } from './config.js';
import { assertSchemaMatches } from './declared-schema.js';
import { onStopRequest, openConfiguredDatabase, serve } from './server.js';

const LEVELS: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/** The primary's log lines, in the same JSON shape pino gives the workers' lines. */
function primaryLogger(level: string) {
  const threshold = LEVELS[level] ?? LEVELS.info!;
  const write = (value: number) => (fields: Record<string, unknown>, msg: string) => {
    if (value >= threshold) process.stdout.write(`${JSON.stringify({ level: value, time: Date.now(), pid: process.pid, role: 'primary', ...fields, msg })}\n`);
  };
  return { info: write(LEVELS.info!), warn: write(LEVELS.warn!), error: write(LEVELS.error!) };
}

/** `serve`, in one process or, with WORKERS > 1 (or 0 on a machine with several CPUs), in several. */
export async function serveWorkers(definition: AppDefinition, config: Config): Promise<void> {
  const count = workerCount(config.workers);
  if (cluster.isWorker || count === 1) {
    await serve(definition, config);
    return;
  }
  const log = primaryLogger(config.logLevel);
  const database = openConfiguredDatabase(config);
  try {
    const migrated = await migrateFrameworkAndApp(database, definition);
    log.info({ applied: appliedNames(migrated), held: migrated.held }, 'migrated');
    await assertSchemaMatches(database, definition);
  } finally {
    await database.close();
  }

  const serving = new WeakSet<Worker>();
  let stopping = false;
  let exitCode = 0;

  const connections = shares(config.maxConnections, count);
  const idle = shares(config.maxIdleConnections, count);
  /** Each worker's settings of its own: its shares of the pool. */
  const settings = new WeakMap<Worker, Record<string, string>>();
  const fork = (env: Record<string, string>): void => {
    const worker = cluster.fork(env);
    settings.set(worker, env);
    worker.on('listening', (address) => {
      serving.add(worker);
      log.info({ worker: worker.id, worker_pid: worker.process.pid, port: address.port }, 'worker listening');
    });
  };
  // Each worker drains on SIGTERM (server.ts), and stops at once on SIGINT; a second signal ends their drains.
  const stop = (reason: string, code: number): void => {
    if (!stopping) exitCode = code;
    stopping = true;
    log.info({ signal: reason }, 'stopping workers');
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(reason === 'SIGINT' ? 'SIGINT' : 'SIGTERM');
  };

  cluster.on('exit', (worker, code, signal) => {
    const fields = { worker: worker.id, worker_pid: worker.process.pid, code, signal };
    if (stopping) {
      if (code !== 0 && signal !== 'SIGTERM') exitCode = 1;
      log.info(fields, 'worker stopped');
    } else if (serving.has(worker)) {
      log.warn(fields, 'worker died; starting a replacement');
      fork(settings.get(worker)!);
    } else {
      log.error(fields, 'worker failed to start; stopping');
      stop('worker start-up failure', 1);
    }
    if (stopping && Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
  });
  onStopRequest((reason) => stop(reason, 0));

  log.info({ workers: count }, 'starting workers');
  for (let i = 0; i < count; i += 1) fork({ DB_MAX_CONNECTIONS: String(Math.max(1, connections[i]!)), DB_MAX_IDLE_CONNECTIONS: String(idle[i]!) });
}
