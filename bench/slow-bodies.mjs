/**
 * Slow bodies against a running service (issue 18, item 11): 400 sockets each
 * send 960 KB of a 1 MiB body to an unauthenticated endpoint, then stall.
 * Samples the server's RSS (/proc) and the latency of GET /healthz every half
 * second for 40 s, then hangs up. Loopback only; stops by itself.
 *
 *   npx tsc -p tsconfig.json && node bench/slow-bodies.mjs [--old-limits]
 *
 * --old-limits: no connection cap and no body rate (as before issue 18),
 * leaving only REQUEST_TIMEOUT_MS (30 s) to end the stalled requests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { rssOf, startServer } from './servers.mjs';

const SOCKETS = 400;
const BODY_BYTES = 1_048_576;
const SENT_BYTES = 960 * 1024;
const RUN_MS = 40_000;
const SAMPLE_MS = 500;
const oldLimits = process.argv.includes('--old-limits');

const dataDir = mkdtempSync(join(tmpdir(), 'restfold-slow-bodies-'));
const server = await startServer(['dist/cli.js', 'serve'], {
  DATABASE_URL: `sqlite:${join(dataDir, 'db.sqlite3')}`,
  SECRET_KEY: 'slow-bodies-bench-secret-key-0123456789',
  LOG_LEVEL: 'warn',
  ...(oldLimits && { MAX_CONNECTIONS: '100000', BODY_TIMEOUT_MS: '3600000' }),
});
const { port } = new URL(server.base);
const mib = (bytes) => Math.round(bytes / 2 ** 20);

/** One attacker: the headers of a 1 MiB JSON body, 960 KB of it, then nothing. */
function attacker(tally) {
  const socket = connect(Number(port), '127.0.0.1');
  let received = '';
  socket.on('data', (data) => (received += data.toString('latin1')));
  socket.on('error', () => undefined);
  socket.on('close', () => {
    const status = received.split('\r\n')[0] || 'closed unanswered';
    const seen = tally.get(status) ?? { count: 0, firstAfterS: seconds(), lastAfterS: 0 };
    tally.set(status, { ...seen, count: seen.count + 1, lastAfterS: seconds() });
  });
  socket.write(`POST /api/v1/auth/token/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${BODY_BYTES}\r\n\r\n`);
  socket.write(`{"username":"${'a'.repeat(SENT_BYTES - 13)}`);
  return socket;
}

/** GET /healthz on a new connection: milliseconds, or null when it failed or took over 2 s. */
async function healthz() {
  const started = performance.now();
  try {
    const response = await fetch(`${server.base}/healthz`, { signal: AbortSignal.timeout(2000), headers: { connection: 'close' } });
    await response.text();
    return response.ok ? Math.round(performance.now() - started) : null;
  } catch {
    return null;
  }
}

const before = rssOf(server.pid);
const tally = new Map();
const started = performance.now();
const seconds = () => Math.round((performance.now() - started) / 100) / 10;
const sockets = Array.from({ length: SOCKETS }, () => attacker(tally));
const samples = [];
while (performance.now() - started < RUN_MS) {
  const [latency] = await Promise.all([healthz(), sleep(SAMPLE_MS)]);
  samples.push({ second: seconds(), rssMiB: mib(rssOf(server.pid)), healthzMs: latency });
}
for (const socket of sockets) socket.destroy();
await sleep(200);
await server.stop();
rmSync(dataDir, { recursive: true, force: true });

const answered = samples.filter((sample) => sample.healthzMs !== null).map((sample) => sample.healthzMs).sort((a, b) => a - b);
const firstServed = samples.find((sample, index) => index > 0 && sample.healthzMs !== null && samples.slice(index).every((later) => later.healthzMs !== null));
console.log(
  JSON.stringify(
    {
      limits: oldLimits ? 'old (no cap, no body rate)' : 'defaults',
      rssBeforeMiB: mib(before),
      rssPeakMiB: Math.max(...samples.map((sample) => sample.rssMiB)),
      rssEndMiB: samples.at(-1).rssMiB,
      healthz: {
        samples: samples.length,
        failed: samples.length - answered.length,
        p50Ms: answered[Math.floor(answered.length / 2)] ?? null,
        maxMs: answered.at(-1) ?? null,
        servedThroughoutFromSecond: firstServed?.second ?? null,
      },
      // How the attackers' connections ended, and when (seconds into the run).
      attackers: Object.fromEntries(tally),
      everySecond: samples.filter((_, index) => index % 2 === 1).map(({ second, rssMiB, healthzMs }) => `${second}s ${rssMiB}MiB ${healthzMs ?? 'fail'}`),
    },
    null,
    2,
  ),
);
