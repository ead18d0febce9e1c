/**
 * The admin as the example service declares it, in a real headless Chromium with its script on:
 * log in, search, see the author by name and the times readably, filter by an author's link, sort,
 * add an article whose author is picked by typing in the picker
 * after fixing a refused field, delete a selection after confirming; add a poster with a picked
 * tag and an uploaded picture, then see its preview; no page trips its CSP.
 * SCREENSHOTS=<folder> also saves the index, a change list and a change form there (docs/admin-*.png).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PASSWORD, startApi, type TestApi } from '../support/api.js';
import { launchChromium } from '../support/chromium.js';
import { makeStaff } from '../support/admin-client.js';
import { submit, titles } from '../support/admin-browser.js';
import { png } from '../support/files.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';

let api: TestApi;
let base: string;
let browser: Browser;
let editorId: number;

beforeAll(async () => {
  api = await startApi();
  const boss = await api.user('boss', { superuser: true });
  await makeStaff(api, boss.id);
  const editor = await api.user('editor');
  editorId = editor.id;
  await api.user('ada');
  for (const [title, token] of [['apple pie', boss.token], ['banana bread', editor.token], ['cherry tart', editor.token], ['<script>alert(1)</script>', boss.token]] as const) {
    await api.request('POST', '/api/v1/articles/', { token, body: { title, body: `How to make ${title}.` } });
  }
  base = `http://127.0.0.1:${await api.listen()}`;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

const shot = async (page: Page, name: string) => {
  if (process.env.SCREENSHOTS) await page.screenshot({ path: join(process.env.SCREENSHOTS, name), fullPage: true });
};

it('logs in, searches, filters, sorts, adds with a picked author after a fix, and deletes a selection', async () => {
  const page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content.Security.Policy|error/i.test(message.text())) violations.push(message.text());
  });
  page.on('pageerror', (error) => violations.push(error.message));
  await page.goto(`${base}/admin/`);
  await page.fill('#id_username', 'boss');
  await page.fill('#id_password', PASSWORD);
  await submit(page, 'form.login button[type=submit]');
  expect(await page.locator('caption').allTextContents()).toEqual(['Authentication and authorization', '/api/v1']);
  expect(await page.locator('table.module th a').allTextContents()).toEqual(['groups', 'users', 'articles', 'users', 'tags']);
  await shot(page, 'admin-index.png');

  await submit(page, 'th a:text("articles")');
  expect(await page.locator('.count').textContent()).toBe('4 results');
  // The declared columns, the title first; the script-like title is text.
  expect(await page.locator('thead th').allTextContents()).toEqual(['Select', 'title', 'author_id', 'created_at', 'id']);
  expect(await titles(page)).toContain('<script>alert(1)</script>');

  await page.fill('input[name=q]', 'bread');
  await submit(page, 'form.search button');
  expect(await titles(page)).toEqual(['banana bread']);

  // The author: by name, linked to the user's change page; the time readable, its ISO value kept.
  const editorRow = page.locator('table.results tbody tr', { hasText: 'banana bread' });
  expect(await editorRow.locator('td:nth-child(3) a').textContent()).toBe('editor');
  expect(await editorRow.locator('td:nth-child(3) a').getAttribute('href')).toBe(`/admin/users/${editorId}/change/`);
  expect(await editorRow.locator('td:nth-child(4) time').textContent()).toMatch(/^[A-Z][a-z]+\.? \d{1,2}, \d{4}, .+ UTC$/);
  expect(await editorRow.locator('td:nth-child(4) time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);

  // The author filter: a link per user.
  await page.goto(`${base}/admin/articles/`);
  await submit(page, '.filter-links a:text("editor")');
  expect((await titles(page)).sort()).toEqual(['banana bread', 'cherry tart']);
  expect(await page.locator('.filter-links li.selected').textContent()).toBe('editor');
  await submit(page, 'th a:text("title")');
  await submit(page, 'th a:text("title")');
  expect(await titles(page)).toEqual(['cherry tart', 'banana bread']);
  await shot(page, 'admin-change-list.png');

  await page.goto(`${base}/admin/articles/add/`);
  await page.fill('#field-title', 'x'.repeat(201));
  await page.fill('#field-body', 'Fold, bake, serve.');
  // The picker: typing searches the users' lookup page; picking fills the id.
  await page.locator('#field-author_id').pressSequentially('edi');
  await page.click(`ul.picker button[data-id="${editorId}"]`);
  expect(await page.inputValue('#field-author_id')).toBe(String(editorId));
  // The name beside the box follows the pick.
  expect(await page.locator('.related-name').textContent()).toBe('editor');
  await submit(page, 'button[name=_continue]');
  expect(await page.locator('.errornote').textContent()).toBe('Please correct the errors below.');
  expect(await page.locator('label[for=field-title] .errorlist').count()).toBe(1);
  expect(await page.inputValue('#field-author_id')).toBe(String(editorId));
  await page.fill('#field-title', 'dumplings');
  await submit(page, 'button[name=_continue]');
  expect(await page.locator('.message.success').textContent()).toBe('The article “dumplings” was added successfully. You may edit it again below.');
  // The author once: by name beside the author_id box, linked; not again among the read-only fields.
  expect(await page.locator('.related-name a:text("editor")').getAttribute('href')).toBe(`/admin/users/${editorId}/change/`);
  expect(await page.locator('dl.readonly dt').allTextContents()).toEqual(['id', 'created_at']);
  expect(await page.locator('.object-tools a').first().textContent()).toBe('History');
  await shot(page, 'admin-change-form.png');
  const stored = (await api.request('GET', '/api/v1/articles/?search=dumplings', { token: (await api.user('reader')).token })).json as { results: { author_id: number }[] };
  expect(stored.results[0]!.author_id).toBe(editorId);

  await page.goto(`${base}/admin/articles/?o=title`);
  await page.check('input[aria-label="Select 1"]');
  await page.check('input[aria-label="Select 2"]');
  await submit(page, '.change-list .actions button');
  expect((await page.locator('.deleted-objects li').allTextContents()).sort()).toEqual(['article “apple pie”', 'article “banana bread”']);
  await submit(page, 'button.danger');
  expect(await page.locator('.message.success').textContent()).toBe('Successfully deleted 2 articles.');
  expect(await page.locator('.count').textContent()).toBe('3 results');
  expect(violations).toEqual([]);
  await page.close();
}, 60_000);

it('adds a record with a picked tag and an uploaded picture, shows its preview, and clears it with its box', async () => {
  const Tag = model('tags', { id: fields.id(), name: fields.string({ maxLength: 50 }) });
  const Poster = model('posters', { id: fields.id(), title: fields.string({ maxLength: 100 }), tag_id: fields.foreignKey('tags'), picture: fields.image({ nullable: true }) });
  const app = withGeneratedMigrations(
    defineApp({
      collections: [
        collection('tags', { serializer: serializer(Tag, { fields: ['id', 'name'], search: ['name'] }) }),
        collection('posters', { serializer: serializer(Poster, { fields: ['id', 'title', 'tag_id', 'picture'] }) }),
      ],
    }),
  );
  const folder = await mkdtemp(join(tmpdir(), 'restfold-admin-browser-'));
  const served = await startApi({ FILES_STORAGE: `file:${folder}` }, app);
  try {
    const boss = await served.user('boss', { superuser: true });
    await makeStaff(served, boss.id);
    for (const name of ['autumn', 'spring', 'summer']) await served.request('POST', '/api/v1/tags/', { token: boss.token, body: { name } });
    const picture = join(folder, 'poster.png');
    await writeFile(picture, png(24, 16));
    const page = await browser.newPage();
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(error.message));
    await page.goto(`http://127.0.0.1:${await served.listen()}/admin/posters/add/`);
    await page.fill('#id_username', 'boss');
    await page.fill('#id_password', PASSWORD);
    await submit(page, 'form.login button[type=submit]');
    await page.fill('#field-title', 'Spring fair');
    await page.locator('#field-tag_id').pressSequentially('spr');
    await page.click('ul.picker button[data-id="2"]');
    await page.setInputFiles('#field-picture', picture);
    await submit(page, 'button[name=_continue]');
    expect(await page.locator('.message.success').textContent()).toContain('was added successfully');
    expect(await page.inputValue('#field-tag_id')).toBe('2');
    expect(await page.locator('.current-file a').textContent()).toBe('poster.png');
    // The preview loads from the API's signed link (same origin, so the CSP allows it).
    expect(await page.locator('img.file-preview').evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth)).toBe(24);
    // The clear box, posted by the browser's own form: the picture goes, the rest stays.
    await page.check('input[name=picture-clear]');
    await submit(page, 'button[name=_continue]');
    expect(await page.locator('.message.success').textContent()).toContain('was changed successfully');
    expect(await page.locator('.current-file').count()).toBe(0);
    expect(await page.inputValue('#field-title')).toBe('Spring fair');
    expect(failures).toEqual([]);
    await page.close();
  } finally {
    await served.close();
    await rm(folder, { recursive: true, force: true });
  }
}, 60_000);
