/**
 * Prometheus metrics (prom-client): requests by route and status, their
 * latency, throttle rejections and where the counters are, the database pool, SQLite's reader threads and their heaps, the compiled statements, and read replicas in use and their lag. Off unless
 * METRICS=true; with METRICS_PORT they are served on that port only, never on
 * the public one.
 */
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Database } from '../../store/connection/database.js';
import { compiledStatementCounts } from '../../store/statements/compiled.js';
import type { Config } from './config.js';
import type { CounterStore } from '../stages/throttling.js';
import { isAdminCall } from '../base/admin-calls.js';

function createMetrics(app: FastifyInstance, database: Database, counters: CounterStore): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'restfold_' });
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ name: 'restfold_http_requests_total', help: 'Requests answered', labelNames, registers: [registry] });
  const latency = new Histogram({
    name: 'restfold_http_request_duration_seconds',
    help: 'Time to answer a request',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const throttled = new Counter({ name: 'restfold_throttled_total', help: 'Requests refused with 429', labelNames: ['route'], registers: [registry] });
  new Gauge({
    name: 'restfold_db_pool_connections',
    help: 'Database pool connections by state (PostgreSQL)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const stats = database.poolStats();
      if (!stats) return;
      for (const [state, value] of Object.entries(stats)) this.set({ state }, value);
    },
  });

  if (database.readerStats()) {
    // Each reader thread has a JavaScript heap of its own, which restfold_nodejs_heap_* (this thread's) leaves out.
    new Gauge({
      name: 'restfold_sqlite_reader_threads',
      help: "SQLite's reader threads running (at most SQLITE_READER_THREADS)",
      registers: [registry],
      collect() {
        this.set(database.readerStats()?.threads ?? 0);
      },
    });
    new Gauge({
      name: 'restfold_sqlite_reader_heap_bytes',
      help: "JavaScript heap resident in SQLite's reader threads, summed, as each last reported (at most a second old at its last read)",
      registers: [registry],
      collect() {
        this.set(database.readerStats()?.heapBytes ?? 0);
      },
    });
  }

  new Gauge({
    name: 'restfold_compiled_statements',
    help: 'Statements the store compiled once and kept, dropped past its bound per selection, or built per request (they read a scoped table), since start',
    labelNames: ['event'],
    registers: [registry],
    collect() {
      const { compiled, dropped, perRequest } = compiledStatementCounts();
      this.set({ event: 'compiled' }, compiled);
      this.set({ event: 'dropped' }, dropped);
      this.set({ event: 'per_request' }, perRequest);
    },
  });

  const { replicas } = database;
  if (replicas) {
    new Gauge({
      name: 'restfold_db_replica_in_use',
      help: 'Whether reads go to the read replica (1), or it is skipped (0): see the state label',
      labelNames: ['replica', 'state'],
      registers: [registry],
      collect() {
        this.reset();
        for (const { name, state } of replicas.status()) this.set({ replica: name, state }, state === 'in use' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'restfold_db_replica_lag_seconds',
      help: 'How far behind the primary the read replica was last seen (absent: not known)',
      labelNames: ['replica'],
      registers: [registry],
      collect() {
        this.reset();
        for (const { name, lagMillis } of replicas.status()) if (lagMillis !== null) this.set({ replica: name }, lagMillis / 1000);
      },
    });
  }

  const { sharing } = counters;
  if (sharing) {
    new Gauge({
      name: 'restfold_rate_limit_counters_shared',
      help: 'Whether throttle counters are in Redis, shared by every process (1), or in this process while Redis is unreachable (0)',
      registers: [registry],
      collect() {
        this.set(sharing.shared ? 1 : 0);
      },
    });
    new Gauge({
      name: 'restfold_rate_limit_fallbacks',
      help: 'How often throttle counters fell back to this process because Redis was unreachable, since start',
      registers: [registry],
      collect() {
        this.set(sharing.fallbacks);
      },
    });
  }

  app.addHook('onResponse', (request, reply, done) => {
    // An admin page counts once, as itself: its in-process calls to the API are part of it.
    if (isAdminCall(request)) return done();
    // The route pattern, not the path, so ids do not multiply the series.
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    requests.inc(labels);
    latency.observe(labels, reply.elapsedTime / 1000);
    if (reply.statusCode === 429) throttled.inc({ route: labels.route });
    done();
  });
  return registry;
}

/** GET /metrics on the app itself (when no METRICS_PORT is set). */
function mountMetrics(app: FastifyInstance, registry: Registry): void {
  app.get('/metrics', { schema: { tags: ['metrics'], summary: 'Prometheus metrics' } }, async (_request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
}

/** A separate listener for /metrics, so the public port never exposes them. */
async function listenForMetrics(registry: Registry, port: number, host: string): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found.');
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      () => response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Metrics failed.'),
    );
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  return server;
}

/** Metrics on the app, or on their own port once the app listens. */
export function serveMetrics(app: FastifyInstance, database: Database, config: Config, counters: CounterStore): void {
  const registry = createMetrics(app, database, counters);
  const port = config.metricsPort;
  if (port === undefined) return mountMetrics(app, registry);
  let server: Server | undefined;
  app.addHook('onListen', async () => {
    server = await listenForMetrics(registry, port, config.host);
  });
  app.addHook('onClose', async () => {
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  });
}
