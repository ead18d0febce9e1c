#!/usr/bin/env node
/**
 * The admin's forms with files (issues 47 and 49): the server's RSS while staff upload through the
 * admin's add form, as a browser posts it (the CSRF field first, the file, the button last).
 *
 *   npm run --silent build && node bench/admin-uploads.mjs [--uploads 4] [--mib 50]
 *
 * Starts `serve` (one process, SQLite, disk storage in a temporary folder, the app
 * bench/files/app.ts, FILES_MAX_BYTES raised to its field's 64 MiB), makes a superuser with the
 * CLI, logs in through /admin/login/, uploads one warm-up file, then posts `--uploads` forms of
 * `--mib` MiB at once to /admin/uploads/add/: RSS (read from /proc every 20 ms) at the peak, less
 * before. Run it on a build of each version to compare.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { rssOf, startServer } from './servers.mjs';

const { values } = parseArgs({ options: { uploads: { type: 'string', default: '4' }, mib: { type: 'string', default: '50' } } });
const MiB = 1024 * 1024;
const work = mkdtempSync(join(tmpdir(), 'restfold-bench-admin-'));
const env = {
  DATABASE_URL: `sqlite:${join(work, 'admin.sqlite3')}`,
  FILES_STORAGE: `file:${join(work, 'files')}`,
  FILES_MAX_BYTES: String(64 * MiB),
  SECRET_KEY: 'admin-bench-secret-key-0123456789abcdef',
  LOG_LEVEL: 'warn',
  WORKERS: '1',
  THROTTLE_ANON: 'off',
  THROTTLE_USER: 'off',
};
const server = await startServer(['dist/cli.js', 'serve', '--app', 'bench/files/app.ts'], env);
execFileSync(process.execPath, ['dist/cli.js', 'createuser', '--app', 'bench/files/app.ts', '--username', 'admin', '--password-stdin', '--superuser'], {
  input: 'admin-bench-password\n',
  env: { ...process.env, ...env },
  stdio: ['pipe', 'ignore', 'inherit'],
});

const cookies = new Map();
/** A request with the jar's cookies; keeps those it sets. */
async function call(method, path, body, headers = {}) {
  const response = await fetch(`${server.base}${path}`, {
    method,
    body,
    redirect: 'manual',
    headers: { ...headers, cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
  });
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const at = pair.indexOf('=');
    cookies.set(pair.slice(0, at), pair.slice(at + 1));
  }
  return { status: response.status, text: await response.text() };
}
const tokenIn = (page) => /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(page)[1];

const login = await call('GET', '/admin/login/');
const form = new URLSearchParams({ csrfmiddlewaretoken: tokenIn(login.text), username: 'admin', password: 'admin-bench-password', next: '/admin/' });
const loggedIn = await call('POST', '/admin/login/', form.toString(), { 'content-type': 'application/x-www-form-urlencoded' });
if (loggedIn.status !== 302) throw new Error(`login: ${loggedIn.status}`);
const csrf = tokenIn((await call('GET', '/admin/uploads/add/')).text);
const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');

/** One add form posted with `bytes` as its file, as a browser sends it; resolves on the admin's redirect. */
function post(bytes) {
  const boundary = `----restfold-bench-${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="csrfmiddlewaretoken"\r\n\r\n${csrf}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="body"; filename="bench.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="_save"\r\n\r\n\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${server.base}/admin/uploads/add/`,
      { method: 'POST', headers: { cookie, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + bytes.length + tail.length } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => (response.statusCode === 302 ? resolve() : reject(new Error(`${response.statusCode} ${text.slice(0, 300)}`))));
      },
    );
    request.on('error', reject);
    request.write(head);
    request.write(bytes);
    request.end(tail);
  });
}

try {
  const uploads = Number(values.uploads);
  const file = randomBytes(Number(values.mib) * MiB);
  await post(file.subarray(0, MiB));
  await new Promise((resolve) => setTimeout(resolve, 500));
  const before = rssOf(server.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(server.pid))), 20);
  const started = performance.now();
  await Promise.all(Array.from({ length: uploads }, () => post(file)));
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, rssOf(server.pid));
  console.log(`admin, ${uploads} × ${values.mib} MiB at once: RSS ${(before / MiB).toFixed(0)} → peak ${(peak / MiB).toFixed(0)} MiB, a rise of ${((peak - before) / MiB).toFixed(1)} MiB in ${seconds.toFixed(1)} s (load average ${loadavg().map((load) => load.toFixed(1)).join(' ')})`);
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
