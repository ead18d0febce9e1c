/**
 * In a real headless Chromium, with its HTTP cache: logging in on a list that
 * anonymous users may read shows the signed-in page (no 304 of the anonymous
 * one), and neither the browsable page nor the Swagger UI at /api/docs/ trips
 * its own Content-Security-Policy.
 */
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PASSWORD, startApi, type TestApi } from '../support/api.js';
import { openPeople } from '../support/open-app.js';
import { launchChromium } from '../support/chromium.js';

let api: TestApi;
let base: string;
let browser: Browser;

beforeAll(async () => {
  api = await startApi({ API_REQUIRE_AUTH: 'false' }, openPeople);
  await api.user('alice');
  await api.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

/** A new page, and the Content-Security-Policy violations it reports. */
async function watchedPage(): Promise<{ page: Page; violations: string[] }> {
  const page = await browser.newPage();
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
  });
  return { page, violations };
}

it('shows itself logged in after logging in on a list anonymous users may read', async () => {
  const { page, violations } = await watchedPage();
  const first = await page.goto(`${base}/api/v1/people/`);
  expect(first?.status()).toBe(200);
  expect(first?.headers().etag).toBeTruthy();
  expect(await page.locator('#login').count()).toBe(1);

  await page.fill('#login input[name=username]', 'alice');
  await page.fill('#login input[name=password]', PASSWORD);
  await Promise.all([page.waitForEvent('load'), page.click('#login button[type=submit]')]);
  await expect.poll(() => page.locator('.account').textContent()).toContain('Logged in as alice');
  expect(await page.locator('meta[name=csrf-token]').count()).toBe(1);

  await Promise.all([page.waitForEvent('load'), page.click('#logout')]);
  await expect.poll(() => page.locator('#login').count()).toBe(1);
  expect(violations).toEqual([]);
  expect(await page.content()).not.toMatch(/\sstyle=/);
  await page.close();
}, 60_000);

it('renders the Swagger UI at /api/docs/ under its CSP, branded Restfold, from /api/v1/schema/, with every named schema', async () => {
  const { page, violations } = await watchedPage();
  const fetched: string[] = [];
  page.on('request', (request) => fetched.push(new URL(request.url()).pathname));
  const reply = await page.goto(`${base}/api/docs/`);
  expect(reply?.headers()['content-security-policy']).toContain("script-src 'self'");
  await expect.poll(() => page.locator('.opblock').count(), { timeout: 20_000 }).toBeGreaterThan(0);
  expect(await page.locator('.opblock-summary-path').allTextContents()).toContain('/api/v1/people/');
  expect(fetched).toContain('/api/v1/schema/');
  expect(fetched).not.toContain('/api/docs/json');
  expect(await page.title()).toBe('Restfold API documentation');
  expect(await page.locator('.topbar, img[alt*="Swagger" i], img[src*="logo" i]').count()).toBe(0);
  const document = (await (await fetch(`${base}/api/v1/schema/`)).json()) as { components: { schemas: Record<string, unknown> } };
  const names = Object.keys(document.components.schemas);
  expect(names).toEqual(expect.arrayContaining(['User', 'UserCreate', 'ErrorEnvelope']));
  // The "Schemas" section: one top-level entry per component (OpenAPI 3.1's JSON Schema view).
  const listed = page.locator('.models article[data-json-schema-level="0"] > .json-schema-2020-12-head .json-schema-2020-12__title');
  await expect.poll(() => listed.allTextContents(), { timeout: 10_000 }).toEqual(names);
  expect(violations).toEqual([]);
  await page.close();
}, 60_000);
