/**
 * The browsable form's inputs for the field kinds of core/field-kinds.ts, in a real headless
 * Chromium: a `<select>` of a choice's values, date and time pickers, a number input stepping by a
 * decimal's places, a text box for a bigint; filled in, sent as JSON, shown back in the edit form.
 */
import { expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { servedToChromium, shownBody } from '../support/chromium.js';

const Project = model('projects', {
  id: fields.id(),
  language: fields.choice(['python', 'typescript', 'rust']),
  starts: fields.date({ nullable: true }),
  at: fields.time({ nullable: true }),
  spent: fields.duration({ nullable: true }),
  cost: fields.decimal({ digits: 8, places: 2, nullable: true }),
  ratio: fields.float({ nullable: true }),
  big: fields.bigint({ nullable: true }),
  ref: fields.uuid({ generated: true }),
  meta: fields.json({ nullable: true }),
  home: fields.url({ nullable: true }),
});
const names = ['id', 'language', 'starts', 'at', 'spent', 'cost', 'ratio', 'big', 'ref', 'meta', 'home'];
const app = withGeneratedMigrations(defineApp({ collections: [collection('projects', { serializer: serializer(Project, { fields: names }) })] }));

const served = servedToChromium(app);

const shown = () => shownBody(served.page);
const input = (name: string) => served.page.locator(`.record-form [name=${name}]`);
const attribute = (name: string, which: string) => input(name).getAttribute(which);

it('offers each kind its own input, sends what is filled in as JSON and shows it back', async () => {
  await served.page.goto(`${served.base}/api/v1/projects/`);
  expect((await shown()).count).toBe(0);

  expect(await input('language').evaluate((element) => element.tagName)).toBe('SELECT');
  expect(await served.page.locator('.record-form select[name=language] option').allTextContents()).toEqual(['---------', 'python', 'typescript', 'rust']);
  expect(await attribute('starts', 'type')).toBe('date');
  expect(await attribute('at', 'type')).toBe('time');
  expect([await attribute('cost', 'type'), await attribute('cost', 'step')]).toEqual(['number', '0.01']);
  expect([await attribute('ratio', 'type'), await attribute('ratio', 'step')]).toEqual(['number', 'any']);
  // A bigint is typed as text: a number input would round digits beyond 2^53.
  expect([await attribute('big', 'type'), await attribute('big', 'inputmode')]).toEqual(['text', 'numeric']);
  expect(await attribute('home', 'type')).toBe('url');
  expect(await input('meta').evaluate((element) => element.tagName)).toBe('TEXTAREA');

  await served.page.selectOption('.record-form select[name=language]', 'rust');
  await input('starts').fill('2026-03-04');
  await input('at').fill('10:15');
  await input('spent').fill('PT90M');
  await input('cost').fill('12.5');
  await input('ratio').fill('0.25');
  await input('big').fill('12345');
  await input('meta').fill('{"owner": "alice"}');
  await input('home').fill('https://example.com/');
  await Promise.all([served.page.waitForURL(/\/api\/v1\/projects\/\d+\/$/), served.page.click('.record-form button[data-method=POST]')]);
  const record = await shown();
  expect(record).toMatchObject({
    language: 'rust', starts: '2026-03-04', at: '10:15:00', spent: 'PT1H30M', cost: '12.50', ratio: 0.25, big: 12345,
    meta: { owner: 'alice' }, home: 'https://example.com/',
  });
  expect(record.ref).toMatch(/^[0-9a-f-]{36}$/);

  // The edit form shows the stored values in the same inputs.
  expect(await input('language').inputValue()).toBe('rust');
  expect(await input('starts').inputValue()).toBe('2026-03-04');
  expect(await input('cost').inputValue()).toBe('12.50');
  expect(JSON.parse(await input('meta').inputValue())).toEqual({ owner: 'alice' });
  await served.page.selectOption('.record-form select[name=language]', 'python');
  await input('cost').fill('3');
  await Promise.all([served.page.waitForEvent('load'), served.page.click('.record-form button[data-method=PATCH]')]);
  expect(await shown()).toMatchObject({ language: 'python', cost: '3.00', starts: '2026-03-04' });
}, 60_000);
