/**
 * The browsable API in a real headless Chromium (Debian's, driven by
 * playwright-core): log in, create a user through the form, find it in the
 * list, filter and order, edit, delete, log out. SCREENSHOT=docs/… also saves
 * a picture of the list page.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchChromium, shownBody } from '../support/chromium.js';

const root = join(import.meta.dirname, '..', '..');
const port = 20_000 + Math.floor(Math.random() * 12_000); // below Linux's ephemeral ports (32768 on), which outgoing connections take
const base = `http://127.0.0.1:${port}`;
const directory = mkdtempSync(join(tmpdir(), 'restfold-browser-'));
const env = { ...process.env, PORT: String(port), DATABASE_URL: `sqlite:${join(directory, 'db.sqlite3')}`, LOG_LEVEL: 'warn', SHUTDOWN_DRAIN_MS: '0', THROTTLE_USER: 'off', THROTTLE_ANON: 'off' };
let server: ChildProcess;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  const created = spawnSync('node', ['dist/cli.js', 'createuser', '--username', 'admin', '--password-stdin', '--superuser'], {
    cwd: root,
    env,
    input: 'admin-pass-123\n',
    encoding: 'utf8',
  });
  expect(created.status, created.stderr).toBe(0);
  server = spawn('node', ['dist/cli.js', 'serve'], { cwd: root, env, stdio: 'inherit' });
  for (let attempt = 0; attempt < 100; attempt++) {
    if (await fetch(`${base}/healthz`).then((reply) => reply.ok, () => false)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  browser = await launchChromium();
  page = await browser.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server?.kill('SIGTERM');
  rmSync(directory, { recursive: true, force: true });
});

const shown = () => shownBody(page);

it('logs in, creates, lists, filters, orders, edits and deletes through the page, then logs out', async () => {
  await page.goto(`${base}/api/v1/users/`);
  await expect.poll(() => page.locator('.headers').textContent()).toContain('HTTP 401');

  await page.fill('#login input[name=username]', 'admin');
  await page.fill('#login input[name=password]', 'admin-pass-123');
  await Promise.all([page.waitForEvent('load'), page.click('#login button[type=submit]')]);
  await expect.poll(() => page.locator('.account').textContent()).toContain('Logged in as admin');
  expect((await shown()).count).toBe(1);

  await page.fill('.record-form input[name=username]', 'carol');
  await page.fill('.record-form input[name=email]', 'carol@example.com');
  await page.fill('.record-form input[name=password]', 'carols-secret');
  await Promise.all([page.waitForURL(/\/api\/v1\/users\/\d+\/$/), page.click('.record-form button[data-method=POST]')]);
  expect(await shown()).toMatchObject({ username: 'carol', email: 'carol@example.com', password: null });
  const carolUrl = page.url();

  await page.goto(`${base}/api/v1/users/`);
  expect((await shown()).results.map((user: { username: string }) => user.username)).toEqual(['admin', 'carol']);

  await page.fill('.filter[data-field=username] .value', 'car');
  await page.selectOption('.filter[data-field=username] .lookup', 'startswith');
  await Promise.all([page.waitForURL(/username__startswith=car/), page.click('#list-controls button[type=submit]')]);
  expect((await shown()).results.map((user: { username: string }) => user.username)).toEqual(['carol']);

  await page.goto(`${base}/api/v1/users/`);
  await page.selectOption('#list-controls select[name=ordering]', '-username');
  await Promise.all([page.waitForURL(/ordering=-username/), page.click('#list-controls button[type=submit]')]);
  expect((await shown()).results.map((user: { username: string }) => user.username)).toEqual(['carol', 'admin']);
  if (process.env.SCREENSHOT) await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });
  const picture = join(directory, 'list.png');
  await page.screenshot({ path: picture, fullPage: true });
  expect(statSync(picture).size).toBeGreaterThan(10_000);

  await page.goto(carolUrl);
  await page.fill('.record-form input[name=email]', 'carol@example.org');
  await Promise.all([page.waitForEvent('load'), page.click('.record-form button[data-method=PATCH]')]);
  expect((await shown()).email).toBe('carol@example.org');

  await Promise.all([page.waitForURL(`${base}/api/v1/users/`), page.click('#delete')]);
  expect((await shown()).results.map((user: { username: string }) => user.username)).toEqual(['admin']);

  await Promise.all([page.waitForEvent('load'), page.click('#logout')]);
  await expect.poll(() => page.locator('.headers').textContent()).toContain('HTTP 401');
  expect(await page.locator('#login').count()).toBe(1);
}, 60_000);
