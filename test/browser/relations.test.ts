/**
 * The browsable form's inputs for a many-to-many, in a real headless Chromium: ids or slugs typed
 * comma-separated, sent as a JSON list of numbers or of strings, shown back in the edit form; what
 * is no id answered with the API's error, and an unknown slug too, nothing stored.
 */
import { expect, it } from 'vitest';
import { collection, defineApp, fields, joinTable, model, relations, serializer } from '../../src/framework/index.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { servedToChromium, shownBody } from '../support/chromium.js';

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
      // The same cards with their labels written by id (two writable relations over one join table would each replace the links).
      collection('numbered-cards', {
        serializer: serializer(Card, { name: 'NumberedCard', fields: ['id', 'title', 'label_ids'], relations: { label_ids: relations.manyToMany(cardLabels) } }),
      }),
      collection('labels', { serializer: serializer(Label, { fields: ['id', 'name'] }) }),
    ],
  }),
);

const served = servedToChromium(app, async (api, token) => {
  for (const name of ['urgent', 'later']) expect((await api.request('POST', '/api/v1/labels/', { token, body: { name } })).status).toBe(201);
});

const shown = () => shownBody(served.page);
const labels = () => served.page.locator('.record-form input[name=labels]');
const labelIds = () => served.page.locator('.record-form input[name=label_ids]');

it("sets a card's labels by name through the form, and shows them in the edit form", async () => {
  await served.page.goto(`${served.base}/api/v1/cards/`);
  expect(await labels().getAttribute('data-kind')).toBe('slugs');

  await served.page.fill('.record-form [name=title]', 'Ship it');
  await labels().fill('later, urgent');
  await Promise.all([served.page.waitForURL(/\/api\/v1\/cards\/\d+\/$/), served.page.click('.record-form button[data-method=POST]')]);
  // Rendered in the labels' id order, whatever order they were typed in.
  expect(await shown()).toMatchObject({ title: 'Ship it', labels: ['urgent', 'later'] });
  expect(await labels().inputValue()).toBe('urgent, later');
});

it('answers an unknown label with the API error and stores nothing', async () => {
  await served.page.goto(`${served.base}/api/v1/cards/`);
  await served.page.fill('.record-form [name=title]', 'Never stored');
  await labels().fill('urgent, someday');
  await served.page.click('.record-form button[data-method=POST]');
  await expect.poll(() => served.page.locator('#result').textContent()).toContain('someday');
  const { token } = await served.api.user('bob');
  const stored = await served.api.request('GET', '/api/v1/cards/', { token });
  expect(stored.json.results.map((card: { title: string }) => card.title)).toEqual(['Ship it']);
});

it("sets a card's labels through the form as comma-separated ids, and shows them in the edit form", async () => {
  const { token } = await served.api.user('carol');
  const ids: number[] = (await served.api.request('GET', '/api/v1/labels/?ordering=id', { token })).json.results.map((label: { id: number }) => label.id);
  await served.page.goto(`${served.base}/api/v1/numbered-cards/`);
  expect(await labelIds().getAttribute('data-kind')).toBe('ids');

  await served.page.fill('.record-form [name=title]', 'By number');
  await labelIds().fill(`${ids[1]}, ${ids[0]}`);
  await Promise.all([served.page.waitForURL(/\/api\/v1\/numbered-cards\/\d+\/$/), served.page.click('.record-form button[data-method=POST]')]);
  expect(await shown()).toMatchObject({ title: 'By number', label_ids: ids });
  const card = await served.api.request('GET', `/api/v1/cards/${(await shown()).id}/`, { token });
  expect(card.json.labels).toEqual(['urgent', 'later']);
  expect(await labelIds().inputValue()).toBe(ids.join(', '));

  await labelIds().fill('urgent');
  await served.page.click('.record-form button[data-method=PATCH]');
  await expect.poll(() => served.page.locator('#result').textContent()).toContain('HTTP 400');
  expect(await served.page.locator('#result').textContent()).toContain('"label_ids"');
});
