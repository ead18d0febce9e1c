/**
 * The browsable form's input for a many-to-many written by slug, in a real headless Chromium: the
 * slugs typed comma-separated, sent as a JSON list of strings, shown back in the edit form; an
 * unknown slug answered with the API's error, nothing stored. (The ids input is in browsable.test.ts.)
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { collection, defineApp, fields, joinTable, model, relations, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { launchChromium, shownBody, signedInPage } from '../support/chromium.js';

const Card = model('cards', { id: fields.id(), title: fields.string({ maxLength: 100 }) });
const Label = model('labels', { id: fields.id(), name: fields.string({ maxLength: 50, unique: true }) });
const cardLabels = joinTable('cards', 'labels');

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('cards', {
        serializer: serializer(Card, {
          fields: ['id', 'title', 'labels'],
          relations: { labels: relations.manyToMany(cardLabels, { slug: { target: Label, field: 'name' } }) },
        }),
      }),
      collection('labels', { serializer: serializer(Label, { fields: ['id', 'name'] }) }),
    ],
  }),
);

let api: TestApi;
let base: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  api = await startApi({}, app);
  base = `http://127.0.0.1:${await api.listen()}`;
  const { token } = await api.user('alice');
  for (const name of ['urgent', 'later']) expect((await api.request('POST', '/api/v1/labels/', { token, body: { name } })).status).toBe(201);
  browser = await launchChromium();
  page = await signedInPage(browser, token);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

const shown = () => shownBody(page);
const labels = () => page.locator('.record-form input[name=labels]');

it("sets a card's labels by name through the form, and shows them in the edit form", async () => {
  await page.goto(`${base}/api/v1/cards/`);
  expect(await labels().getAttribute('data-kind')).toBe('slugs');

  await page.fill('.record-form [name=title]', 'Ship it');
  await labels().fill('later, urgent');
  await Promise.all([page.waitForURL(/\/api\/v1\/cards\/\d+\/$/), page.click('.record-form button[data-method=POST]')]);
  // Rendered in the labels' id order, whatever order they were typed in.
  expect(await shown()).toMatchObject({ title: 'Ship it', labels: ['urgent', 'later'] });
  expect(await labels().inputValue()).toBe('urgent, later');
});

it('answers an unknown label with the API error and stores nothing', async () => {
  await page.goto(`${base}/api/v1/cards/`);
  await page.fill('.record-form [name=title]', 'Never stored');
  await labels().fill('urgent, someday');
  await page.click('.record-form button[data-method=POST]');
  await expect.poll(() => page.locator('#result').textContent()).toContain('someday');
  const { token } = await api.user('bob');
  const stored = await api.request('GET', '/api/v1/cards/', { token });
  expect(stored.json.results.map((card: { title: string }) => card.title)).toEqual(['Ship it']);
});
