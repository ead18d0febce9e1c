/**
 * A live stream at the path `live.path` names (docs/guides/live-changes.md), and its
 * events as the OpenAPI document describes them (docs/openapi.md, Live streams). In a file of its
 * own: its app is the only one listening in the file's PostgreSQL schema.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi } from '../support/api.js';
import { openEvents } from '../support/event-stream.js';
import { withGeneratedMigrations } from '../support/migrations.js';

describe('a stream at the path it names, as the document types its events', () => {
  // A collection named `events`, whose stream would otherwise be /events/events/.
  const Happening = model('live_happenings', { id: fields.id(), title: fields.string({ maxLength: 100 }) });
  const app = withGeneratedMigrations(defineApp({ collections: [collection('events', { serializer: serializer(Happening, { fields: ['id', 'title'] }), live: { path: 'stream' } })] }));
  let served: TestApi;
  afterAll(() => served?.close());

  it('serves and documents /events/stream/, and each event it sends is one the document describes', async () => {
    served = await startApi({}, app);
    const origin = `http://127.0.0.1:${await served.listen()}`;
    const document = (await served.request('GET', '/api/v1/schema/')).json;
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/api/v1/events/'))).toEqual(['/api/v1/events/', '/api/v1/events/{id}/', '/api/v1/events/stream/']);
    const media = document.paths['/api/v1/events/stream/'].get.responses['200'].content['text/event-stream'];
    expect(media['x-itemSchema']).toEqual({ $ref: '#/components/schemas/LiveHappeningEvent' });
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats.default(ajv);
    ajv.addSchema(document, 'openapi.json');
    const documented = ajv.compile({ $ref: 'openapi.json#/components/schemas/LiveHappeningEvent' });

    const user = await served.user('root', { superuser: true });
    const stream = await openEvents(`${origin}/api/v1/events/stream/`, { authorization: `Bearer ${user.token}` });
    expect(stream.status).toBe(200);
    // The stream hears changes once it is seeded, which a write seen arriving shows (one made as it opens
    // may go unheard: written again until one arrives). Every event seen is checked below.
    const seen = [];
    for (let tries = 0; seen.length === 0 && tries < 10; tries++) {
      await served.request('POST', '/api/v1/events/', { token: user.token, body: { title: 'Seed' } });
      seen.push(...(await stream.next(1000).then((event) => [event], () => [])));
    }
    // Each change heard before the next is made: the hub reads a changed record when it hears of it, and one
    // created and deleted before then is none the subscriber ever saw (nothing to tell).
    const nextChange = async () => {
      for (;;) {
        const event = await stream.next();
        seen.push(event);
        if (event.data.title !== 'Seed') return event;
      }
    };
    const created = (await served.request('POST', '/api/v1/events/', { token: user.token, body: { title: 'Launch' } })).json;
    const received = [await nextChange()];
    await served.request('PATCH', `/api/v1/events/${created.id}/`, { token: user.token, body: { title: 'Launch, moved' } });
    received.push(await nextChange());
    await served.request('DELETE', `/api/v1/events/${created.id}/`, { token: user.token });
    received.push(await nextChange());
    expect(received.map(({ event, data }) => [event, data])).toEqual([
      ['created', { id: created.id, title: 'Launch' }],
      ['updated', { id: created.id, title: 'Launch, moved' }],
      ['deleted', { id: created.id }],
    ]);
    for (const event of seen) expect([documented({ ...event }), documented.errors], event.event).toEqual([true, null]);
    // The browsable list reads the stream where it is.
    const page = await served.request('GET', '/api/v1/events/', { token: user.token, headers: { accept: 'text/html' } });
    expect(page.body).toContain('data-url="/api/v1/events/stream/');
    // The default path is a record's path here: a malformed id.
    expect((await served.request('GET', '/api/v1/events/events/', { token: user.token })).status).toBe(400);
    stream.close();
  });
});
