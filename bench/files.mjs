#!/usr/bin/env node
/**
 * Files (issue 47) against the floor, node:http with busboy and fs (bench/baseline/files.mjs), both
 * servers up at once on one machine, in alternating rounds (which one goes first alternates too),
 * so a machine busy with other work weighs on both alike; the ratios are what to read.
 *
 *   npm run --silent build && node bench/files.mjs [--rounds 6] [--only uploads,memory,downloads]
 *     [--node-flags '--heap-growing-percent=100'] [--floor-sync]
 *
 * - uploads: 8 concurrent multipart uploads of 10 MiB to disk, 3 times a round: MiB/s each.
 *   Target: Restfold ≥ 80 % of the floor's.
 * - memory: 16 concurrent uploads of 50 MiB to a freshly started server (one warm-up upload
 *   first): its RSS (read from /proc every 20 ms) at the peak, less before. Target: < 64 MiB.
 * - downloads: 8 concurrent clients each downloading one file 4 times (10 MiB) or 100 times
 *   (64 KiB) a round, Restfold through its signed link, the floor by fs.createReadStream: MiB/s.
 *   Target: Restfold ≥ 80 % of the floor's.
 *
 * Both servers run one process each (WORKERS=1), on SQLite, storing under a temporary folder.
 * --node-flags: flags for Restfold's node (given to node, `serve` keeps them over its own GC
 * tuning). --floor-sync: the floor syncs each file before answering, as Restfold does.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cpuTicksOf, rssOf, startServer } from './servers.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '6' },
    only: { type: 'string', default: 'uploads,memory,downloads' },
    'node-flags': { type: 'string', default: '' },
    'floor-sync': { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(values.rounds);
const only = new Set(values.only.split(','));
const MiB = 1024 * 1024;
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
const work = mkdtempSync(join(tmpdir(), 'restfold-bench-files-'));
const median = (numbers) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)];
const loads = () => loadavg().map((load) => load.toFixed(1)).join(' ');

/** A server of each kind, each storing in a folder of its own. */
async function restfold(label) {
  const folder = join(work, `${label}-files`);
  const server = await startServer([...values['node-flags'].split(' ').filter(Boolean), 'dist/cli.js', 'serve', '--app', 'bench/files/app.ts'], {
    DATABASE_URL: `sqlite:${join(work, `${label}.sqlite3`)}`,
    FILES_STORAGE: `file:${folder}`,
    // The app's field takes 64 MiB; the largest file any field accepts is 10 MiB unless raised.
    FILES_MAX_BYTES: String(64 * 1024 * 1024),
    SECRET_KEY: 'files-bench-secret-key-0123456789abcdef',
    LOG_LEVEL: 'warn',
    WORKERS: '1',
    THROTTLE_ANON: 'off',
    THROTTLE_USER: 'off',
  });
  return { ...server, name: 'Restfold', folder, uploadPath: '/api/v1/uploads/' };
}

async function floor(label) {
  const folder = join(work, `${label}-floor`);
  mkdirSync(folder);
  const server = await startServer(['bench/baseline/files.mjs'], { FILES_FOLDER: folder, FILES_SYNC: values['floor-sync'] ? '1' : '' });
  return { ...server, name: 'floor', folder, uploadPath: '/upload' };
}

/** One multipart upload of `bytes` as the file part `body`; resolves with the answer's JSON. */
function upload(server, bytes) {
  const boundary = `----restfold-bench-${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="body"; filename="bench.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${server.base}${server.uploadPath}`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + bytes.length + tail.length, accept: 'application/json' },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => (response.statusCode === 201 ? resolve(JSON.parse(text)) : reject(new Error(`${server.name}: ${response.statusCode} ${text.slice(0, 300)}`))));
      },
    );
    request.on('error', (error) => reject(new Error(`${server.name} closed an upload: ${error.message}`)));
    request.write(head);
    request.write(bytes);
    request.end(tail);
  });
}

/** Downloads `url` whole; resolves with its length, checked against `size`. */
function download(url, size) {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { agent }, (response) => {
      let received = 0;
      response.on('data', (chunk) => (received += chunk.length));
      response.on('end', () => (response.statusCode === 200 && received === size ? resolve(received) : reject(new Error(`${url}: ${response.statusCode}, ${received} of ${size} bytes`))));
    });
    request.on('error', reject);
    request.end();
  });
}

/** Empties a server's storage folder between rounds (the bench's rows may name what is gone: nothing reads them). */
function emptied(folder) {
  for (const entry of readdirSync(folder)) rmSync(join(folder, entry), { recursive: true, force: true });
}

/** MiB/s of `run` (which moves `mib` MiB). */
async function rate(mib, run) {
  const started = performance.now();
  await run();
  return mib / ((performance.now() - started) / 1000);
}

/**
 * Alternating rounds of `measure(server)` (MiB/s) on both servers; per-round ratios Restfold / floor,
 * of the rates and of the server's CPU time (/proc, clock ticks) the round took.
 */
async function alternate(title, servers, measure) {
  const rows = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? servers : [...servers].reverse();
    const result = {};
    for (const server of order) {
      const ticks = cpuTicksOf(server.pid);
      result[server.name] = await measure(server);
      result[`${server.name} cpu`] = cpuTicksOf(server.pid) - ticks;
    }
    rows.push(result);
    const cpu = result['Restfold cpu'] / result['floor cpu'];
    console.log(`${title} round ${round + 1}: Restfold ${result.Restfold.toFixed(0)} MiB/s, floor ${result.floor.toFixed(0)} MiB/s (${((100 * result.Restfold) / result.floor).toFixed(0)} %), CPU ${cpu.toFixed(2)}x the floor's; load ${loads()}`);
  }
  return {
    restfold: median(rows.map((row) => row.Restfold)),
    floor: median(rows.map((row) => row.floor)),
    ratio: median(rows.map((row) => row.Restfold / row.floor)),
    cpu: median(rows.map((row) => row['Restfold cpu'] / row['floor cpu'])),
  };
}

const lines = [
  `files bench, ${new Date().toISOString()}, ${ROUNDS} rounds${values['node-flags'] ? `, Restfold's node given ${values['node-flags']}` : ''}${values['floor-sync'] ? ', the floor syncing' : ''}, load at the start ${loads()}`,
];

if (only.has('uploads')) {
  const servers = [await restfold('uploads'), await floor('uploads')];
  const file = randomBytes(10 * MiB);
  // Warm-up: both servers' paths compiled before the first round.
  for (const server of servers) await Promise.all(Array.from({ length: 8 }, () => upload(server, file)));
  const result = await alternate('uploads', servers, async (server) => {
    const measured = await rate(8 * 3 * 10, async () => {
      for (let batch = 0; batch < 3; batch++) await Promise.all(Array.from({ length: 8 }, () => upload(server, file)));
    });
    emptied(server.folder);
    return measured;
  });
  lines.push(`uploads, 8 × 10 MiB at once: Restfold ${result.restfold.toFixed(0)} MiB/s, floor ${result.floor.toFixed(0)} MiB/s; median of the rounds' ratios ${(100 * result.ratio).toFixed(0)} % (target ≥ 80 %); CPU per MiB ${result.cpu.toFixed(2)}x the floor's`);
  await Promise.all(servers.map((server) => server.stop()));
}

if (only.has('memory')) {
  const file = randomBytes(50 * MiB);
  for (const start of [restfold, floor]) {
    const server = await start('memory');
    await upload(server, file.subarray(0, MiB));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = rssOf(server.pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(server.pid))), 20);
    const started = performance.now();
    await Promise.all(Array.from({ length: 16 }, () => upload(server, file)));
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, rssOf(server.pid));
    lines.push(`memory, 16 × 50 MiB at once, ${server.name}: RSS ${(before / MiB).toFixed(0)} → peak ${(peak / MiB).toFixed(0)} MiB, a rise of ${((peak - before) / MiB).toFixed(1)} MiB (${((16 * 50) / seconds).toFixed(0)} MiB/s)${server.name === 'Restfold' ? ' (target < 64 MiB)' : ''}`);
    await server.stop();
  }
}

if (only.has('downloads')) {
  const servers = [await restfold('downloads'), await floor('downloads')];
  for (const [size, times] of [[10 * MiB, 4], [64 * 1024, 100]]) {
    const file = randomBytes(size);
    const urls = {};
    for (const server of servers) {
      const answer = await upload(server, file);
      urls[server.name] = server.name === 'Restfold' ? answer.body.url : `${server.base}/files/${answer.names[0]}`;
    }
    const each = (server) => Promise.all(Array.from({ length: 8 }, async () => {
      for (let time = 0; time < times; time++) await download(urls[server.name], size);
    }));
    for (const server of servers) await each(server);
    const label = size >= MiB ? `${size / MiB} MiB` : `${size / 1024} KiB`;
    const result = await alternate(`downloads of ${label}`, servers, (server) => rate((8 * times * size) / MiB, () => each(server)));
    lines.push(`downloads of ${label}, 8 clients at once: Restfold ${result.restfold.toFixed(0)} MiB/s, floor ${result.floor.toFixed(0)} MiB/s; median of the rounds' ratios ${(100 * result.ratio).toFixed(0)} % (target ≥ 80 %); CPU per MiB ${result.cpu.toFixed(2)}x the floor's`);
  }
  await Promise.all(servers.map((server) => server.stop()));
}

lines.push(`load at the end ${loads()}`);
agent.destroy();
rmSync(work, { recursive: true, force: true });
console.log(`\n${lines.join('\n')}`);
