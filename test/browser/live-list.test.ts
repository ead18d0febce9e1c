/**
 * A live collection's list page in a real headless Chromium: the page opens the list's stream of
 * changes (with its filters) and reads the list again as records change, so what it shows follows
 * writes made elsewhere without a reload.
 */
import { expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { servedToChromium, shownBody } from '../support/chromium.js';

const Note = model('notes', { id: fields.id(), text: fields.string({ maxLength: 100 }), done: fields.boolean({ default: false }) });

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('notes', { serializer: serializer(Note, { fields: ['id', 'text', 'done'] }), filterFields: ['done'], live: true }),
      collection('quiet-notes', { serializer: serializer(Note, { name: 'QuietNote', fields: ['id', 'text', 'done'] }) }),
    ],
  }),
);

const served = servedToChromium(app);
const shown = () => shownBody(served.page);

it('reads the list again as records are written elsewhere, within its filters', async () => {
  const { page, api, base } = served;
  const { token } = await api.user('bob');
  await page.goto(`${base}/api/v1/notes/?done=false`);
  expect(await page.locator('#live').getAttribute('data-url')).toBe('/api/v1/notes/events/?done=false');
  expect((await shown()).count).toBe(0);

  const made = await api.request('POST', '/api/v1/notes/', { token, body: { text: 'written elsewhere' } });
  expect(made.status).toBe(201);
  await expect.poll(async () => (await shown()).results.map((note: { text: string }) => note.text)).toEqual(['written elsewhere']);

  await api.request('POST', '/api/v1/notes/', { token, body: { text: 'already done', done: true } });
  await api.request('PATCH', `/api/v1/notes/${made.json.id}/`, { token, body: { text: 'changed elsewhere' } });
  await expect.poll(async () => (await shown()).results.map((note: { text: string }) => note.text)).toEqual(['changed elsewhere']);
});

it('opens no stream for a collection that is not live', async () => {
  await served.page.goto(`${served.base}/api/v1/quiet-notes/`);
  expect(await served.page.locator('#live').count()).toBe(0);
});
