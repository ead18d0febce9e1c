#!/usr/bin/env node
/**
 * `node bench/compare.mjs --against DIR|DIR#workers:N|baseline|baseline:N[@POOL]|floor|floor:restfold[-without:PART+…]|workers:N[@POOL]|pooler|url:URL[,…] [--scenario c|a|e|g|i|j|k] [--slots 20] [--slot-seconds 1.5] [--profile DIR]`
 *
 * CPU per request and throughput of this checkout's build (dist/) against another build (DIR: the
 * dist/ of another checkout, a git worktree say), the baseline (baseline:N: on N processes), the baseline served by Fastify (floor:
 * bench/baseline/fastify.mjs), the same served by Fastify as Restfold sets it up (floor:restfold:
 * bench/baseline/fastify-restfold.mjs), this build with WORKERS=N, this build in pooler mode (pooler:
 * DB_PREPARED_STATEMENTS=false, every statement sent unnamed as behind a transaction pooler), or this
 * build on another URL to the same data (url:URL, a pooler in front of it say), on the database at
 * DATABASE_URL, filled by `npm run bench:seed` first. Several `--against`, comma-separated, run as
 * more sides of the same run (raw, Fastify floor and Restfold in one, say). Every server runs at once and
 * the load (50 connections) moves from one to the next every slot, so the machine's drift, tens of
 * per cent over minutes on a shared VM, reaches both alike; a slot's CPU is read from /proc, and the
 * bytes each server process's V8 heap allocated over it (garbage included: bench/allocation-probe.mjs,
 * loaded into every server). Prints each side's CPU, allocation per request and req/s, and the medians
 * of the per-slot ratios of every pair of sides, which a change of a
 * few per cent can be read from where `npm run bench`'s one-server-at-a-time rounds cannot. Where
 * PostgreSQL runs on this machine, also the CPU its processes spent per request (the cluster's own
 * and the benchmark database's backends: other databases' load is left out, not their share of the
 * cores), so a gap can be told to lie in the server or in the database;
 * and where PgBouncer runs here, the CPU its processes spent per request (every one's).
 * Also per request: the load generator's CPU (autocannon, in this process), a cluster primary's own,
 * the PostgreSQL backends that carry live changes (application_name …-listen: LISTEN and each
 * process's pg_notify), and the server's involuntary context switches. `@POOL` sets DB_MAX_CONNECTIONS for a side's
 * whole service (Restfold's workers share it; baseline:N@POOL gives each process POOL/N), and
 * DIR#workers:N runs another build with WORKERS=N.
 * With `--profile DIR`, every server runs under `node --cpu-prof`, writing its profile to
 * DIR/this, DIR/other (DIR/other-2, … for more sides; for bench/profile-summary.mjs), and each one's
 * profiled time per request (warm-up included), summed over its processes (a cluster's primary and workers), is printed by layer (bench/layers.mjs), side by side;
 * with `--by-stage` too, Restfold's own time by the stage of a request instead of by folder.
 * A slot ends once its server has settled (`settled`): what its requests left
 * to do after their answers is charged to it, and does not slow the next side's slot.
 * Scenario (j) deletes an article per request: the run first adds the articles it deletes, one per
 * request it could send, and deletes those left at its end.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { layersOf, stageOf } from './layers.mjs';
import { headersFor, scenarios } from './scenarios.mjs';
import { cpuTicksOf, ownTicksOf, startServer, warmUp } from './servers.mjs';

const { values: options } = parseArgs({
  options: {
    against: { type: 'string' },
    scenario: { type: 'string', default: 'c' },
    slots: { type: 'string', default: '20' },
    'slot-seconds': { type: 'string', default: '1.5' },
    profile: { type: 'string' },
    // With --profile: Restfold's own time by the stage of a request (bench/layers.mjs, stageOf), not by folder.
    'by-stage': { type: 'boolean', default: false },
  },
});
if (!options.against || !process.env.DATABASE_URL) throw new Error('Set DATABASE_URL (seeded by npm run bench:seed) and pass --against (its forms: the top of bench/compare.mjs).');
const slotSeconds = Number(options['slot-seconds']);
const TICKS_PER_SECOND = 100;

// Each server process reports the bytes its heap allocated, read per slot (bench/allocation-probe.mjs).
const allocations = mkdtempSync(join(tmpdir(), 'restfold-allocation-'));
const sides = 1 + options.against.split(',').length;
// Each side's pool: 25 connections (the default) for two sides; fewer for more, within PostgreSQL's 100.
const serverEnv = { DATABASE_URL: process.env.DATABASE_URL, LOG_LEVEL: 'warn', THROTTLE_ANON: 'off', THROTTLE_USER: 'off', BENCH_ALLOCATION_DIR: allocations, DB_MAX_CONNECTIONS: String(sides > 2 ? Math.floor(50 / sides) : 25) };
const profiles = options.profile;
/** The baseline (over node:http or Fastify), a build's dist/, or `workers:N`, pooler mode or another URL of this one. */
function start(against, side) {
  const node = [`--import=${new URL('allocation-probe.mjs', import.meta.url).href}`, ...(profiles ? ['--cpu-prof', `--cpu-prof-dir=${join(profiles, side)}`] : [])];
  const serve = (args, env = serverEnv) => startServer([...node, ...args], env);
  if (against === 'baseline') return serve(['bench/baseline/server.mjs']);
  // baseline:N@POOL: its N processes share POOL connections, as Restfold's workers share DB_MAX_CONNECTIONS
  // (without it each process has a pool of its own as large as a one-process side's).
  const [, baselineWorkers, baselinePool] = /^baseline:(\d+)(?:@(\d+))?$/.exec(against) ?? [];
  if (baselineWorkers) {
    return serve(['bench/baseline/server.mjs'], { ...serverEnv, WORKERS: baselineWorkers, ...(baselinePool && { DB_MAX_CONNECTIONS: String(Math.max(1, Math.floor(Number(baselinePool) / Number(baselineWorkers)))) }) });
  }
  if (against === 'floor') return serve(['bench/baseline/fastify.mjs']);
  // floor:restfold-without:logger+hooks leaves those parts of the set-up out (FLOOR_WITHOUT in the floor).
  const floor = /^floor:restfold(?:-without:(.+))?$/.exec(against);
  if (floor) return serve(['bench/baseline/fastify-restfold.mjs'], { ...serverEnv, FLOOR_WITHOUT: floor[1]?.replaceAll('+', ',') ?? '' });
  if (against === 'pooler') return serve(['dist/cli.js', 'serve'], { ...serverEnv, DB_PREPARED_STATEMENTS: 'false' });
  // Live changes listen on DATABASE_URL, as the other side does: a LISTEN through a transaction pooler
  // is lost, and the side whose listener hears nothing would be spared the work the other does.
  if (against.startsWith('url:')) return serve(['dist/cli.js', 'serve'], { ...serverEnv, DATABASE_URL: against.slice('url:'.length), LIVE_DATABASE_URL: serverEnv.DATABASE_URL });
  // workers:N@POOL: with DB_MAX_CONNECTIONS=POOL for the whole service (its workers share it).
  const [, workers, pool] = /^workers:(\d+)(?:@(\d+))?$/.exec(against) ?? [];
  if (workers) return serve(['dist/cli.js', 'serve'], { ...serverEnv, WORKERS: workers, ...(pool && { DB_MAX_CONNECTIONS: pool }) });
  // DIR#workers:N: another build's dist/ with WORKERS=N.
  const [, dir, dirWorkers] = /^(.+)#workers:(\d+)$/.exec(against) ?? [];
  if (dir) return serve([`${dir}/cli.js`, 'serve'], { ...serverEnv, WORKERS: dirWorkers });
  return serve([`${against}/cli.js`, 'serve']);
}
/** The database both servers read: PostgreSQL's backends serving others (other sessions' tests) are not counted. */
const benchDatabase = new URL(process.env.DATABASE_URL).pathname.slice(1);
/** A PostgreSQL backend's title names its user, database and client; the cluster's own processes (WAL writer, checkpointer) name none. */
const BACKEND_TITLE = /^postgres: [^:]+: \S+ (\S+) (?:\S+\(\d+\)|\[local\])/;
/**
 * CPU time so far, by pid, in clock ticks, of this machine's processes of `command` (postgres, pgbouncer):
 * PostgreSQL's own and its backends serving the benchmark's database.
 */
function processTicks(command) {
  const ticks = new Map();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const [name, rest] = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ');
      if (!name.endsWith(`(${command}`)) continue;
      const backend = command === 'postgres' && BACKEND_TITLE.exec(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
      if (backend && backend[1] !== benchDatabase) continue;
      const fields = rest.split(' ');
      ticks.set(pid, Number(fields[11]) + Number(fields[12]));
    } catch {
      // Ended meanwhile.
    }
  }
  return ticks;
}
/** The pids (as /proc names them) of the benchmark database's backends that listen for live changes (application_name …-listen), asked on `client`. */
async function listeningBackends(client) {
  const { rows } = await client.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE '%-listen'");
  return new Set(rows.map(({ pid }) => String(pid)));
}
/** How often a server's processes were preempted so far (involuntary context switches, every thread's). */
function switchesOf(pid) {
  let sum = 0;
  for (const each of processTree(pid)) {
    try {
      for (const task of readdirSync(`/proc/${each}/task`)) sum += Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${each}/task/${task}/status`, 'utf8'))[1]);
    } catch {
      // Ended meanwhile.
    }
  }
  return sum;
}
/** A process and its children (cluster workers), by pid. */
function processTree(pid) {
  try {
    return [pid, ...readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).flatMap((child) => processTree(Number(child)))];
  } catch {
    return [];
  }
}
const readingOf = (pid) => {
  const file = join(allocations, String(pid));
  const [reading, bytes] = existsSync(file) ? readFileSync(file, 'utf8').split(' ').map(Number) : [0, 0];
  return { reading, bytes };
};
/** The bytes a server's processes have allocated so far: each asked (SIGUSR2) and its new reading waited for. */
async function allocatedBytes(pid) {
  let sum = 0;
  for (const each of processTree(pid)) {
    const before = readingOf(each).reading;
    process.kill(each, 'SIGUSR2');
    let now = readingOf(each);
    for (let waited = 0; now.reading <= before; waited++, now = readingOf(each)) {
      if (waited > 200) throw new Error(`process ${each} did not report its allocation`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    sum += now.bytes;
  }
  return sum;
}
/**
 * Waits until a server has done the work its slot's requests left behind (changes still being sent
 * to other processes, say: at most 3 s), so that it is charged to that slot, not to the next side's,
 * whose requests it would also slow.
 */
async function settled(pid) {
  let before = cpuTicksOf(pid);
  for (let waited = 0; waited < 30; waited++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = cpuTicksOf(pid);
    if (now - before <= 1) return;
    before = now;
  }
}
/** Ticks spent between two readings (a backend started meanwhile counts from 0; one that ended is lost). */
const ticksSince = (before, after) => [...after].reduce((sum, [pid, ticks]) => sum + ticks - (before.get(pid) ?? 0), 0);

const sideDir = (index) => ['this', 'other'][index] ?? `other-${index}`;
const servers = [];
for (const [index, against] of ['dist', ...options.against.split(',')].entries()) {
  servers.push({ name: index === 0 ? 'this build' : against, slots: [], warmUpRequests: 0, ...(await start(against, sideDir(index))) });
}

/** Scenario (j)'s pool: `count` new articles by the bench user, the first one's id; and those left deleted after. */
async function articlePool(count) {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query(
      "INSERT INTO articles (title, body, author_id, created_at) SELECT 'pool ' || n, '', users.id, now() FROM generate_series(1, $1) AS n, users WHERE users.username = 'bench' RETURNING id",
      [count],
    );
    const ids = rows.map(({ id }) => Number(id)).sort((a, b) => a - b);
    if (ids.length !== count || ids.at(-1) - ids[0] !== count - 1) throw new Error('The pool of articles to delete is not one run of ids.');
    return {
      from: ids[0],
      drop: async () => {
        const cleaner = new pg.Client({ connectionString: process.env.DATABASE_URL });
        await cleaner.connect();
        await cleaner.query('DELETE FROM articles WHERE id BETWEEN $1 AND $2', [ids[0], ids.at(-1)]).finally(() => cleaner.end());
      },
    };
  } finally {
    await client.end();
  }
}
let pool;
/** The connection listeningBackends asks on, one for the run: its queries fall between slots, outside any slot's reading. */
let catalog;

try {
  const login = await fetch(`${servers[0].base}/api/v1/auth/token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'bench', password: 'bench-pass-123' }),
  });
  if (!login.ok) throw new Error(`Logging in as "bench" answered ${login.status}: is the database seeded by npm run bench:seed?`);
  const { token } = await login.json();
  const newest = await fetch(`${servers[0].base}/api/v1/users/?ordering=-id&page_size=1`, { headers: { authorization: `Bearer ${token}` } });
  const seeded = { firstUserId: 1, lastUserId: (await newest.json()).results[0].id, searchTerm: '', poolFrom: 0 };
  const scenario = scenarios(seeded, 1).find(({ key, baseline }) => baseline && key === options.scenario);
  if (!scenario) throw new Error('--scenario must be a, c, e, g, i, j or k (those the baseline serves).');
  // Enough for every side's warm-up (3 s, 10 000 requests at least) and every slot at 6 000 deletes a second.
  if (scenario.pool) {
    pool = await articlePool(servers.length * ((3 + Number(options.slots) * slotSeconds) * 6_000 + 10_000));
    seeded.poolFrom = pool.from;
  }
  let k = 0;
  const load = (server, seconds) =>
    autocannon({
      url: server.base,
      connections: 50,
      duration: seconds,
      headers: headersFor(scenario, token),
      requests: [
        {
          setupRequest: (request) => {
            const { body, ...rest } = scenario.request(k++);
            return { ...request, ...rest, body: body && JSON.stringify(body) };
          },
        },
      ],
    });

  catalog = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await catalog.connect();
  for (const server of servers) server.warmUpRequests = (await warmUp((seconds) => load(server, seconds), server.workers, 3)).requests.total;
  for (let slot = 0; slot < Number(options.slots); slot++) {
    // Rotate which side goes first, so none always follows another's load.
    for (const server of servers.map((_, index) => servers[(index + slot) % servers.length])) {
      const allocatedBefore = await allocatedBytes(server.pid);
      const before = cpuTicksOf(server.pid);
      const switchesBefore = switchesOf(server.pid);
      const primaryBefore = ownTicksOf(server.pid);
      const generatorBefore = process.cpuUsage();
      const [databaseBefore, poolerBefore] = [processTicks('postgres'), processTicks('pgbouncer')];
      const result = await load(server, slotSeconds);
      await settled(server.pid);
      // Which statuses, so an overloaded machine's 503s are told from a wrong answer.
      if (result.non2xx || result.errors) throw new Error(`${server.name}: ${result.non2xx} non-2xx (by status: ${JSON.stringify(result.statusCodeStats)}), ${result.errors} errors.`);
      const ticks = cpuTicksOf(server.pid) - before;
      // The load generator (autocannon, in this process) and, under WORKERS, the primary alone, in ticks as the rest.
      const { user, system } = process.cpuUsage(generatorBefore);
      const generator = ((user + system) * TICKS_PER_SECOND) / 1e6;
      const switches = switchesOf(server.pid) - switchesBefore;
      const primary = processTree(server.pid).length > 1 ? ownTicksOf(server.pid) - primaryBefore : 0;
      const databaseAfter = processTicks('postgres');
      const [database, pooler] = [ticksSince(databaseBefore, databaseAfter), ticksSince(poolerBefore, processTicks('pgbouncer'))];
      // Of the database's, the backends that carry live changes (LISTEN, and each process's pg_notify).
      const listeners = await listeningBackends(catalog);
      const pick = (ticks) => new Map([...ticks].filter(([pid]) => listeners.has(pid)));
      const listen = ticksSince(pick(databaseBefore), pick(databaseAfter));
      const allocated = (await allocatedBytes(server.pid)) - allocatedBefore;
      server.slots.push({ ticks, switches, primary, generator, database, listen, pooler, allocated, requests: result.requests.total, rps: result.requests.total / slotSeconds });
    }
  }

  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
  const micros = ({ ticks, requests }) => (ticks * 1e6) / TICKS_PER_SECOND / requests;
  const total = (slots, key) => slots.reduce((sum, slot) => sum + slot[key], 0);
  console.log(`load average at the end: ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
  for (const { name, slots } of servers) {
    const requests = total(slots, 'requests');
    const spent = (key, whose) => (total(slots, key) ? `, ${micros({ ticks: total(slots, key), requests }).toFixed(1)} µs of ${whose}` : '');
    const kilobytes = (total(slots, 'allocated') / 1024 / requests).toFixed(1);
    console.log(`${name}: ${micros({ ticks: total(slots, 'ticks'), requests }).toFixed(1)} µs of CPU per request${spent('primary', "its cluster primary's")}${spent('database', "PostgreSQL's")}${spent('listen', 'it in its listening backends')}${spent('pooler', "PgBouncer's")}${spent('generator', "the load generator's")}, ${(total(slots, 'switches') / requests).toFixed(2)} involuntary context switches per request, ${kilobytes} KB allocated per request, ${(requests / (slots.length * slotSeconds)).toFixed(0)} req/s`);
  }
  const perRequest = (slot) => slot.allocated / slot.requests;
  for (const [index, first] of servers.entries()) {
    for (const second of servers.slice(index + 1)) {
      const ratios = (of) => median(first.slots.map((slot, at) => of(slot) / of(second.slots[at]))).toFixed(3);
      console.log(`${first.name} / ${second.name}, median of ${options.slots} slots: CPU per request ${ratios(micros)}, allocation per request ${ratios(perRequest)}, req/s ${ratios((slot) => slot.rps)}`);
    }
  }
} finally {
  await Promise.all(servers.map((server) => server.stop()));
  rmSync(allocations, { recursive: true, force: true });
  await catalog?.end();
  await pool?.drop();
}
if (profiles) {
  // Each side's profiled time (self, by layer) over every request it answered, the warm-up's included:
  // in µs, summed over its processes' profiles (a cluster's primary and workers each write one).
  const sides = servers.map((server, index) => {
    const dir = join(profiles, sideDir(index));
    const layers = new Map();
    for (const file of readdirSync(dir)) {
      const profiled = layersOf(JSON.parse(readFileSync(join(dir, file), 'utf8')), options['by-stage'] ? stageOf : undefined);
      for (const [name, count] of profiled.layers) layers.set(name, (layers.get(name) ?? 0) + count * profiled.interval);
    }
    const requests = server.warmUpRequests + server.slots.reduce((sum, slot) => sum + slot.requests, 0);
    return { layers, perRequest: (micros) => micros / requests };
  });
  const names = [...new Set(sides.flatMap(({ layers }) => [...layers.keys()]))].sort((a, b) => (sides[0].layers.get(b) ?? 0) - (sides[0].layers.get(a) ?? 0));
  const cell = (side, name) => side.perRequest(side.layers.get(name) ?? 0).toFixed(1);
  const sum = (side) => side.perRequest([...side.layers.values()].reduce((total, count) => total + count, 0)).toFixed(1);
  console.log(`\n| profiled µs per request, by ${options['by-stage'] ? 'stage' : 'layer'} | ${servers.map(({ name }) => name).join(' | ')} |\n|---|${servers.map(() => '--:|').join('')}`);
  for (const name of names) console.log(`| ${name} | ${sides.map((side) => cell(side, name)).join(' | ')} |`);
  console.log(`| all but idle | ${sides.map(sum).join(' | ')} |`);
}
