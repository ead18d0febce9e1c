/**
 * The admin's group form in a real headless Chromium with its scripts on: the filter box above the
 * permissions hides the names not matching what is typed, a hidden pick stays picked, and the group
 * is saved with what was picked; no page trips its CSP.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PASSWORD, startApi, type TestApi, type TestUser } from '../support/api.js';
import { launchChromium } from '../support/chromium.js';
import { makeStaff } from '../support/admin-client.js';
import { submit } from '../support/admin-browser.js';

let api: TestApi;
let boss: TestUser;
let browser: Browser;

beforeAll(async () => {
  api = await startApi();
  boss = await api.user('boss', { superuser: true });
  await makeStaff(api, boss.id);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

it('filters the permissions as they are typed, and saves what was picked', async () => {
  const page = await browser.newPage();
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content.Security.Policy|error/i.test(message.text())) violations.push(message.text());
  });
  page.on('pageerror', (error) => violations.push(error.message));
  await page.goto(`http://127.0.0.1:${await api.listen()}/admin/auth/groups/add/`);
  await page.fill('#id_username', 'boss');
  await page.fill('#id_password', PASSWORD);
  await submit(page, 'form.login button[type=submit]');
  await page.fill('#id_name', 'tag editors');
  await page.selectOption('#id_permissions', ['articles.view']);
  const filter = page.locator('input.choice-filter[data-filter-for=id_permissions]');
  await filter.fill('tags.');
  const shown = await page.locator('#id_permissions option').evaluateAll((options: HTMLOptionElement[]) => options.filter((option) => !option.hidden).map((option) => option.value));
  expect(shown).toEqual(['tags.add', 'tags.change', 'tags.delete', 'tags.view']);
  // Ctrl-click adds to the selection, as a user picks more than one.
  await page.locator('#id_permissions option[value="tags.change"]').click({ modifiers: ['Control'] });
  await page.locator('#id_permissions option[value="tags.add"]').click({ modifiers: ['Control'] });
  await submit(page, 'button[name=_continue]');
  expect(await page.locator('.message.success').textContent()).toContain('The group “tag editors” was saved successfully.');
  const group = (await api.request('GET', '/api/v1/auth/groups/?name=tag%20editors', { token: boss.token })).json.results[0];
  expect(group.permissions).toEqual(['articles.view', 'tags.add', 'tags.change']);
  expect(violations).toEqual([]);
  await page.close();
}, 60_000);
