/**
 * The admin's core flow in a real headless Chromium with JavaScript off (no page needs it): log in,
 * search, sort, add a record after fixing a refused field, see its history, delete a selection after
 * confirming, log out; change and delete an inline's rows from the parent's form; no page trips its
 * own Content-Security-Policy.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PASSWORD, startApi, type TestApi } from '../support/api.js';
import { launchChromium } from '../support/chromium.js';
import { makeStaff } from '../support/admin-client.js';
import { submit, titles } from '../support/admin-browser.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { collection, defineApp, fields, isAuthenticated, model, modelAdmin, serializer } from '../../src/framework/index.js';

let api: TestApi;
let base: string;
let browser: Browser;

beforeAll(async () => {
  api = await startApi({ HISTORY: 'true' });
  const editor = await api.user('editor', { permissions: ['articles.view', 'articles.add', 'articles.change', 'articles.delete'] });
  await makeStaff(api, editor.id);
  for (const title of ['apple', 'banana', 'cherry']) await api.request('POST', '/api/v1/articles/', { token: editor.token, body: { title } });
  base = `http://127.0.0.1:${await api.listen()}`;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
});


it('logs in, searches, sorts, adds, fixes a refused field, sees the history, deletes a selection and logs out', async () => {
  const page = await browser.newPage({ javaScriptEnabled: false });
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
  });
  await page.goto(`${base}/admin/articles/`);
  expect(new URL(page.url()).pathname).toBe('/admin/login/');
  await page.fill('#id_username', 'editor');
  await page.fill('#id_password', PASSWORD);
  await submit(page, 'form.login button[type=submit]');
  expect(new URL(page.url()).pathname).toBe('/admin/articles/');
  expect(await page.locator('.count').textContent()).toBe('3 results');

  await page.fill('input[name=q]', 'ban');
  await submit(page, 'form.search button');
  expect(await titles(page)).toEqual(['banana']);

  await page.goto(`${base}/admin/articles/`);
  await submit(page, 'th a:text("title")');
  await submit(page, 'th a:text("title")');
  expect(await titles(page)).toEqual(['cherry', 'banana', 'apple']);

  await page.goto(`${base}/admin/articles/add/`);
  await page.fill('#field-title', 'x'.repeat(201));
  await submit(page, 'button[name=_save]');
  expect(await page.locator('.errornote').textContent()).toContain('Please correct the errors below.');
  expect(await page.locator('label[for=field-title] .errorlist').count()).toBe(1);
  await page.fill('#field-title', 'date');
  await submit(page, 'button[name=_save]');
  expect(await page.locator('.message.success').textContent()).toContain('was added successfully');
  expect(await page.locator('.count').textContent()).toBe('4 results');

  await submit(page, 'tr:has-text("date") td a');
  await submit(page, '.object-tools a:text("History")');
  expect(await page.locator('table.history tbody tr td').allTextContents()).toEqual(['editor', 'Added.']);
  await page.goto(`${base}/admin/articles/`);

  await page.check('input[aria-label="Select 1"]');
  await page.check('input[aria-label="Select 2"]');
  await submit(page, '.actions button');
  expect(await page.locator('.deleted-objects li').allTextContents()).toEqual(['article “apple”', 'article “banana”']);
  await submit(page, 'button.danger');
  expect(await page.locator('.message.success').textContent()).toBe('Successfully deleted 2 articles.');
  expect(await page.locator('.count').textContent()).toBe('2 results');

  await submit(page, 'header form button');
  expect(await page.locator('h1').textContent()).toBe('Logged out');
  expect(violations).toEqual([]);
  await page.close();
}, 60_000);

it("changes one inline row and deletes another from the parent's form, without JavaScript", async () => {
  const Book = model('books', { id: fields.id(), title: fields.string({ maxLength: 100 }) });
  const Chapter = model('chapters', { id: fields.id(), book_id: fields.foreignKey('books'), title: fields.string({ maxLength: 100 }), pages: fields.integer({ minValue: 1 }) });
  const books = collection('books', { serializer: serializer(Book, { fields: ['id', 'title'] }), permissions: [isAuthenticated] });
  const chapters = collection('chapters', {
    serializer: serializer(Chapter, { fields: ['id', 'title', 'pages'], readOnly: ['id', 'book_id'] }),
    parent: { collection: books, field: 'book_id' },
    permissions: [isAuthenticated],
    defaultOrdering: ['id'],
  });
  const served = await startApi({}, withGeneratedMigrations(defineApp({ collections: [books, chapters], admin: { collections: [modelAdmin(books, { inlines: [chapters] })] } })));
  try {
    const boss = await served.user('boss', { superuser: true });
    await makeStaff(served, boss.id);
    await served.request('POST', '/api/v1/books/', { token: boss.token, body: { title: 'Dune' } });
    for (const [title, pages] of [['One', 10], ['Two', 20]] as const) await served.request('POST', '/api/v1/books/1/chapters/', { token: boss.token, body: { title, pages } });
    const page = await browser.newPage({ javaScriptEnabled: false });
    await page.goto(`http://127.0.0.1:${await served.listen()}/admin/books/1/change/`);
    await page.fill('#id_username', 'boss');
    await page.fill('#id_password', PASSWORD);
    await submit(page, 'form.login button[type=submit]');
    // A refused row comes back with its message beside its input.
    await page.fill('#field-chapters-0-pages', '0');
    await submit(page, 'form.inline-rows button[type=submit]');
    expect(await page.locator('label[for=field-chapters-0-pages] .errorlist').count()).toBe(1);
    await page.fill('#field-chapters-0-pages', '12');
    await page.check('input[name=chapters-1-DELETE]');
    await submit(page, 'form.inline-rows button[type=submit]');
    expect(await page.locator('.message.success').textContent()).toBe('The chapters were saved: 1 changed, 1 deleted.');
    expect(await page.inputValue('#field-chapters-0-pages')).toBe('12');
    expect(await page.locator('form.inline-rows tbody tr').count()).toBe(1);
    await page.close();
  } finally {
    await served.close();
  }
}, 60_000);
