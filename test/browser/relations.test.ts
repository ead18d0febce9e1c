/**
 * The browsable form's input for a many-to-many written by slug, in a real headless Chromium: the
 * slugs typed comma-separated, sent as a JSON list of strings, shown back in the edit form; an
 * unknown slug answered with the API's error, nothing stored. (The ids input is in browsable.test.ts.)
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
      collection('labels', { serializer: serializer(Label, { fields: ['id', 'name'] }) }),
    ],
  }),
);

const served = servedToChromium(app, async (api, token) => {
  for (const name of ['urgent', 'later']) expect((await api.request('POST', '/api/v1/labels/', { token, body: { name } })).status).toBe(201);
});

const shown = () => shownBody(served.page);
const labels = () => served.page.locator('.record-form input[name=labels]');

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
