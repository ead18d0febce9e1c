/**
 * File fields in the browsable form, in a real headless Chromium: a file input (the form sent as
 * multipart/form-data), the record shown with its file, the stored file linked (an image shown
 * through its signed link), kept when no file is chosen, cleared by its box; a refused upload
 * named in the answer; the client's file name shown as text, never markup.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { servedToChromium, shownBody } from '../support/chromium.js';
import { objectsIn, png } from '../support/files.js';

const Poster = model('posters', {
  id: fields.id(),
  title: fields.string({ maxLength: 100 }),
  picture: fields.image({ maxWidth: 200, maxHeight: 200, nullable: true }),
  programme: fields.file({ accept: ['application/pdf'], nullable: true }),
});
const app = withGeneratedMigrations(defineApp({ collections: [collection('posters', { serializer: serializer(Poster, { fields: ['id', 'title', 'picture', 'programme'] }) })] }));

const folder = mkdtempSync(join(tmpdir(), 'restfold-browser-files-'));
const served = servedToChromium(app, undefined, { FILES_STORAGE: `file:${folder}` });
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const shown = () => shownBody(served.page);
const form = () => served.page.locator('.record-form');
// A name a careless page would run as markup.
const trickyName = '<b id=injected>x.png';

it('uploads a file through the form, shows the record with its file, keeps it unless cleared', async () => {
  const { page, base } = served;
  await page.goto(`${base}/api/v1/posters/`);
  expect(await form().getAttribute('enctype')).toBe('multipart/form-data');
  expect(await page.locator('.record-form input[name=picture]').getAttribute('type')).toBe('file');
  expect(await page.locator('.record-form input[name=picture]').getAttribute('accept')).toBe('image/*');
  expect(await page.locator('.record-form input[name=programme]').getAttribute('accept')).toBe('application/pdf');

  await page.fill('.record-form input[name=title]', 'Spring concert');
  await page.setInputFiles('.record-form input[name=picture]', { name: trickyName, mimeType: 'image/png', buffer: png(3, 2) });
  await Promise.all([page.waitForURL(/\/api\/v1\/posters\/\d+\/$/), page.click('.record-form button[data-method=POST]')]);
  const created = await shown();
  expect(created).toMatchObject({ title: 'Spring concert', picture: { name: trickyName, content_type: 'image/png', width: 3, height: 2 }, programme: null });
  expect((await objectsIn(folder)).length).toBe(1);

  // The edit form links the stored file by its name, as text, and shows the image through its signed link.
  const current = page.locator('.current-file');
  expect(await current.locator('a').textContent()).toBe(trickyName);
  expect(await page.locator('#injected').count()).toBe(0);
  await expect.poll(() => page.locator('img.file-preview').evaluate((image: HTMLImageElement) => image.naturalWidth)).toBe(3);
  const download = await fetch(String(await current.locator('a').getAttribute('href')));
  expect([download.status, Buffer.from(await download.arrayBuffer()).equals(png(3, 2))]).toEqual([200, true]);

  // No file chosen: the stored one is kept.
  await page.fill('.record-form input[name=title]', 'Summer concert');
  await Promise.all([page.waitForEvent('load'), page.click('.record-form button[data-method=PATCH]')]);
  const renamed = await shown();
  expect(renamed.title).toBe('Summer concert');
  expect(renamed.picture).toMatchObject({ name: trickyName, size: created.picture.size });

  // A file its field refuses by its bytes: the answer names the field, nothing changes.
  await page.setInputFiles('.record-form input[name=programme]', { name: 'programme.pdf', mimeType: 'application/pdf', buffer: Buffer.from('<html>not a pdf</html>') });
  await page.click('.record-form button[data-method=PATCH]');
  await expect.poll(() => page.locator('#result').textContent()).toContain('HTTP 400');
  expect(JSON.parse((await page.locator('#result').textContent())!.replace(/^.*\n/, '')).details).toHaveProperty('programme');
  expect((await objectsIn(folder)).length).toBe(1);

  // The clear box empties the field, and its object goes.
  await page.reload();
  await page.check('.record-form [data-clear=picture]');
  await Promise.all([page.waitForEvent('load'), page.click('.record-form button[data-method=PATCH]')]);
  expect(await shown()).toMatchObject({ title: 'Summer concert', picture: null });
  await expect.poll(async () => (await objectsIn(folder)).length).toBe(0);
  expect(await page.locator('.current-file').count()).toBe(0);
}, 60_000);
