#!/usr/bin/env node
/**
 * `npm run bench -- [--db sqlite|postgres] [--rows N] [--duration S] [--connections C] [--workers W] [--compare-workers W2]
 *   [--only a,c,e,g,i] [--settle S] [--floor] [--pooler-url URL] [--replica-url URL]`
 *
 * Seeds a fresh database through bench/seed.mjs, then, one server at a time:
 * the baseline (bench/baseline/server.mjs) for (a), (c), (e), (g), (i), and
 * Restfold as `npm start` runs it for (a)-(i); on PostgreSQL (b) again without
 * the trigram indexes, and the baseline's scenarios also in pooler mode
 * (DB_PREPARED_STATEMENTS=false), directly and, with --pooler-url, through that
 * transaction pooler; with --replica-url (a streaming replica of --pg-url's server), every scenario
 * also on Restfold reading from it (DATABASE_REPLICA_URLS); with --compare-workers, the baseline's scenarios also
 * with that many workers; with --floor, also by the baseline's answers served
 * through Fastify (bench/baseline/fastify.mjs): what Restfold's own layers cost lies between it and Restfold.
 * Compared scenarios alternate between servers --rounds times (median kept),
 * each measurement on a fresh server.
 * Each scenario gets a warm-up (until each worker has answered WARMUP.requestsPerWorker), then an
 * autocannon run over loopback.
 * The table replaces this configuration's section of bench/RESULTS.md.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { writeSection } from './report.mjs';
import { headersFor, scenarios } from './scenarios.mjs';
import { WARMUP, rssOf, startServer, waitUntilQuiet, warmUp } from './servers.mjs';

const { values: options } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    rows: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    workers: { type: 'string', default: '1' },
    floor: { type: 'boolean', default: false },
    // Also serve the baseline's scenarios with this many workers in the same run, to compare with --workers.
    'compare-workers': { type: 'string', default: '' },
    // Baseline and Restfold alternate this many times on the baseline's scenarios; the median is reported.
    rounds: { type: 'string', default: '3' },
    'pg-url': { type: 'string', default: process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    // A transaction pooler in front of --pg-url's server (PgBouncer, say), passing every database through by name.
    'pooler-url': { type: 'string', default: process.env.BENCH_POOLER_URL ?? '' },
    // A streaming replica of --pg-url's server, which has every database it has.
    'replica-url': { type: 'string', default: process.env.BENCH_REPLICA_URL ?? '' },
    note: { type: 'string', default: '' },
    // Only these scenarios (keys, comma-separated); their table gets a section of its own.
    only: { type: 'string', default: '' },
    // At most this long, before and after each measurement, waiting for the machine to go quiet.
    settle: { type: 'string', default: '120' },
  },
});
if (!['sqlite', 'postgres'].includes(options.db)) throw new Error('--db must be sqlite or postgres.');
const rows = Number(options.rows);
const duration = Number(options.duration);
const connections = Number(options.connections);
const warmup = Math.max(1, Math.min(3, Math.round(duration / 5)));
const rounds = Number(options.rounds);
const settle = Number(options.settle);
const only = options.only ? options.only.split(',') : [];

/** The run with the median req/s (its latencies and memory come with it). */
const median = (runs) => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor((runs.length - 1) / 2)];

// ---- the database -------------------------------------------------------------------------------

async function onPostgres(url, work) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh, empty database: a temporary SQLite file, or a new PostgreSQL database. */
async function freshDatabase() {
  if (options.db === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'restfold-bench-'));
    return { url: `sqlite:${join(dir, 'bench.sqlite3')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `restfold_bench_${randomBytes(4).toString('hex')}`;
  await onPostgres(options['pg-url'], (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(options['pg-url']);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => onPostgres(options['pg-url'], (client) => client.query(`DROP DATABASE ${name} WITH (FORCE)`)),
  };
}

/** The database's URL on another server's host, port and credentials (a pooler passing databases through by name, a replica). */
function onServerOf(databaseUrl, serverUrl) {
  const url = new URL(databaseUrl);
  const server = new URL(serverUrl);
  for (const part of ['hostname', 'port', 'username', 'password']) url[part] = server[part];
  return url.toString();
}

const WITH_REPLICA = 'restfold, reading a replica';

function runToEnd(command, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${command} ${args.join(' ')} exited with ${code}`))));
  });
}

// ---- measuring ----------------------------------------------------------------------------------

/** One request, to check the scenario works before measuring it. */
async function probe(base, scenario, token, k) {
  const { method, path, body } = scenario.request(k);
  const response = await fetch(base + path, { method, headers: headersFor(scenario, token), body: body && JSON.stringify(body) });
  const expected = scenario.status ?? 200;
  if (response.status !== expected) throw new Error(`${scenario.title}: ${method} ${path} answered ${response.status}, expected ${expected}: ${await response.text()}`);
  return response;
}

/** An autocannon run (a thenable that can be stopped early). */
function drive(server, scenario, token, seconds, counter) {
  const requests = [
    {
      setupRequest: (request) => {
        const { method, path, body } = scenario.request(counter.next++);
        return { ...request, method, path, body: body && JSON.stringify(body) };
      },
    },
  ];
  return autocannon({ url: server.base, connections, duration: seconds, headers: headersFor(scenario, token), requests });
}

async function measure(server, scenario, token) {
  const counter = { next: 1_000_000 * Math.floor(Math.random() * 1000) };
  await probe(server.base, scenario, token, counter.next++);
  await warmUp((seconds) => drive(server, scenario, token, seconds, counter), server.workers, warmup);
  await waitUntilQuiet(settle);
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssOf(server.pid))), 250);
  const result = await drive(server, scenario, token, duration, counter);
  clearInterval(sampler);
  await waitUntilQuiet(settle);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    rssMb: Math.max(peakRss, rssOf(server.pid)) / 2 ** 20,
  };
}

// ---- the run ------------------------------------------------------------------------------------

async function main() {
  const database = await freshDatabase();
  const stopping = [];
  try {
    console.log(`Seeding ${rows} users and articles on ${options.db}...`);
    const seeded = JSON.parse(await runToEnd(process.execPath, ['bench/seed.mjs', '--rows', String(rows), '--json'], { DATABASE_URL: database.url }));
    console.log(`Seeded in ${seeded.seconds.toFixed(1)} s.`);
    const results = [];
    /** The median round of a scenario on a server, with every round's req/s. */
    const record = (scenario, server, runs) => {
      const measured = { ...median(runs), rounds: runs.map((run) => run.rps) };
      results.push({ scenario, server, ...measured });
      console.log(`${scenario.title} [${server}]: ${measured.rps.toFixed(0)} req/s, p50 ${measured.p50} ms, p99 ${measured.p99} ms, errors ${measured.errors}, non-2xx ${measured.non2xx}, RSS ${measured.rssMb.toFixed(0)} MB`);
    };

    // The search page: 50 when there are that many pages of matches, else the last full one.
    // A scenario that needs a pool of rows made for it (deletes) runs in bench/compare.mjs only.
    const all = scenarios(seeded, Math.max(1, Math.min(50, Math.floor(seeded.searchMatches / 20)))).filter((scenario) => !scenario.pool);
    const list = only.length > 0 ? all.filter((scenario) => only.includes(scenario.key)) : all;
    if (list.length < only.length) throw new Error(`--only names unknown scenarios; known: ${all.map((s) => s.key).join(', ')}.`);
    const compared = options['compare-workers'];
    const serverEnv = { DATABASE_URL: database.url, LOG_LEVEL: 'warn', THROTTLE_ANON: 'off', THROTTLE_USER: 'off', WORKERS: options.workers };

    // Pooler mode: no named statements, as a transaction pooler needs (docs/databases.md).
    const unnamed = { ...serverEnv, DB_PREPARED_STATEMENTS: 'false' };
    const pooled = options['pooler-url'] && { ...unnamed, DATABASE_URL: onServerOf(database.url, options['pooler-url']) };
    const replicated = options['replica-url'] && { ...serverEnv, DATABASE_REPLICA_URLS: onServerOf(database.url, options['replica-url']) };
    const servers = {
      baseline: () => startServer(['bench/baseline/server.mjs'], { DATABASE_URL: database.url }),
      // What pooler mode costs the bare driver too: PostgreSQL parses and plans every unnamed statement.
      ...(options.db === 'postgres' && { 'baseline, pooler mode': () => startServer(['bench/baseline/server.mjs'], { DATABASE_URL: database.url, DB_PREPARED_STATEMENTS: 'false' }) }),
      restfold: () => startServer(['dist/cli.js', 'serve'], serverEnv),
      ...(options.db === 'postgres' && { 'restfold, pooler mode': () => startServer(['dist/cli.js', 'serve'], unnamed) }),
      ...(pooled && { 'restfold, pooler mode, through the pooler': () => startServer(['dist/cli.js', 'serve'], pooled) }),
      ...(options.floor && { 'fastify floor': () => startServer(['bench/baseline/fastify.mjs'], { DATABASE_URL: database.url }) }),
      ...(compared && { [`restfold, ${compared} workers`]: () => startServer(['dist/cli.js', 'serve'], { ...serverEnv, WORKERS: compared }) }),
      ...(replicated && { [WITH_REPLICA]: () => startServer(['dist/cli.js', 'serve'], replicated) }),
    };
    /** One scenario on a fresh server of the given kind. */
    const measureOn = async (kind, scenario) => {
      const server = await servers[kind]();
      stopping.push(server.stop);
      try {
        return await measure(server, scenario, seeded.token);
      } finally {
        await server.stop();
        stopping.pop();
      }
    };

    for (const scenario of list) {
      // The compared scenarios alternate between servers, `rounds` times, so a drift in the machine's
      // speed (a shared VM's is large) reaches both sides; each side keeps its median round.
      const kinds = scenario.baseline ? Object.keys(servers) : ['restfold', ...(replicated ? [WITH_REPLICA] : [])];
      const measured = new Map(kinds.map((kind) => [kind, []]));
      for (let round = 0; round < (scenario.baseline ? rounds : 1); round++) {
        for (const kind of kinds) measured.get(kind).push(await measureOn(kind, scenario));
      }
      for (const [kind, runs] of measured) record(scenario, kind, runs);
    }
    if (options.db === 'postgres' && list.some((s) => s.key === 'b')) {
      // The same search with the trigram indexes gone: the planner's other choice is a scan.
      // The collections' search fields get them (named <table>_<column>_trgm_idx by the generated migrations).
      await onPostgres(database.url, async (client) => {
        const { rows } = await client.query("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexdef LIKE '%gin_trgm_ops%'");
        await client.query(`DROP INDEX ${rows.map((row) => `"${row.indexname}"`).join(', ')}`);
      });
      const search = list.find((s) => s.key === 'b');
      record({ ...search, key: 'b-noindex', title: `${search.title}, **without** trigram indexes` }, 'restfold', [await measureOn('restfold', search)]);
    }

    writeSection({
      db: options.db,
      rounds,
      rows,
      duration,
      connections,
      warmup: WARMUP,
      workers: options.workers,
      only,
      replica: Boolean(replicated),
      settle,
      note: options.note,
      machine: { cores: availableParallelism(), cpu: cpus()[0]?.model ?? 'unknown', node: process.version },
      seeded,
      results,
    });
    console.log('Wrote bench/RESULTS.md.');
  } finally {
    for (const stop of stopping.reverse()) await stop();
    await database.drop();
  }
}

main().catch((error) => {
  console.error(`bench: ${error instanceof Error ? error.stack : String(error)}`);
  process.exit(1);
});
