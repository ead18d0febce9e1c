/**
 * Files (issue 47) through HTTP: multipart uploads on create, update and partial update, content
 * judged by its bytes, signed links that expire and die with the object they name, downloads with
 * their headers and ranges, and storage that never keeps an object no row names (each failure
 * case counts the objects stored). The whole suite runs on disk and on an S3 API server.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { collection, defineApp, fields, isAuthenticated, model, recordStore, serializer, validationFailed } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { openEvents } from '../support/event-stream.js';
import { diskTestStorage, formOf, pdf, png, send, TEST_STORAGES, type TestStorage } from '../support/files.js';
import { lintProblems } from '../support/openapi-lint.js';

const Doc = model('file_docs', {
  id: fields.id(),
  title: fields.string({ maxLength: 40 }),
  pages: fields.integer({ default: 1 }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
  attachment: fields.file({ accept: ['application/pdf', 'text/plain'], maxBytes: 64 * 1024, nullable: true }),
  picture: fields.image({ maxWidth: 64, maxHeight: 64, nullable: true }),
  kept: fields.file({ nullable: true, keep: true }),
  code: fields.string({ maxLength: 20, unique: true, nullable: true }),
});

const docFields = ['id', 'title', 'pages', 'attachment', 'picture', 'kept', 'code'];
const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('docs', {
        serializer: serializer(Doc, { fields: docFields }),
        permissions: [isAuthenticated],
        live: true,
        scope: ({ user }) => ({ owner_id: user?.id ?? null }),
        hooks: {
          // A title the hook refuses: the write fails after its files were stored.
          beforeCreate: ({ values }) => {
            if (values.title === 'refused by hook') throw validationFailed({ title: ['The hook refused it.'] });
          },
          beforeUpdate: ({ values }) => {
            if (values.title === 'refused by hook') throw validationFailed({ title: ['The hook refused it.'] });
          },
        },
        actions: {
          // A body of its own with a file field: its upload rules, not the collection's model's.
          scan: {
            detail: false,
            method: 'POST',
            body: { note: fields.string({ maxLength: 20 }), scan: fields.file({ accept: ['application/pdf'], maxBytes: 1024 }) },
            handler: ({ body }) => {
              const { note, scan } = body as { note: string; scan: { name: string; size: number; content_type: string } };
              return { note, name: scan.name, size: scan.size, type: scan.content_type };
            },
          },
        },
      }),
    ],
  }),
);

describe.each(Object.keys(TEST_STORAGES) as (keyof typeof TEST_STORAGES)[])('files on %s storage', (kind) => {
  let storage: TestStorage;
  let api: TestApi;
  let base: string;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    storage = await TEST_STORAGES[kind]();
    api = await startApi({ LOG_LEVEL: 'error', ...storage.env, FILES_MAX_PARTS: '10', FILES_MAX_BODY_BYTES: String(1024 * 1024), FILES_MAX_BYTES: String(512 * 1024), FILES_URL_TTL: '2m' }, app);
    base = `http://127.0.0.1:${await api.listen()}`;
    alice = await api.user('filealice');
    bob = await api.user('filebob');
  });
  afterAll(async () => {
    await api.close();
    await storage.close();
  });

  const create = (fields: Record<string, string>, files: Parameters<typeof formOf>[1] = {}, token = alice.token) => send(base, 'POST', '/api/v1/docs/', { token, form: formOf(fields, files) });

  describe('uploads', () => {
    let before: number;
    beforeEach(async () => {
      before = (await storage.objects()).length;
    });

    it('creates a record with a file and an image in one multipart body, its ordinary fields read as a form', async () => {
      const created = await create({ title: 'report', pages: '12' }, { attachment: [pdf(), 'Q3 report.pdf', 'text/html'], picture: [png(10, 20), 'me.png', 'image/png'] });
      expect(created.status).toBe(201);
      expect(created.json).toMatchObject({ title: 'report', pages: 12, kept: null });
      expect(created.json.attachment).toMatchObject({ name: 'Q3 report.pdf', size: pdf().length, content_type: 'application/pdf' });
      expect(created.json.picture).toMatchObject({ name: 'me.png', content_type: 'image/png', width: 10, height: 20 });
      expect(created.json.attachment.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/api/v1/docs/${created.json.id}/_files/attachment/\\?key=`));
      expect(JSON.stringify(created.json)).not.toContain('"key"');
      expect((await storage.objects()).length).toBe(before + 2);
      const download = await send(base, 'GET', created.json.attachment.url);
      expect(download.status).toBe(200);
      expect(download.bytes.equals(pdf())).toBe(true);
    });

    it('validates ordinary fields exactly as JSON ones, storing nothing when they fail', async () => {
      const refused = await create({ title: 'x'.repeat(41), pages: 'many' }, { attachment: [pdf(), 'a.pdf'] });
      expect(refused.status).toBe(400);
      expect(Object.keys(refused.json.details).sort()).toEqual(['pages', 'title']);
      expect((await storage.objects()).length).toBe(before);
    });

    it('removes what it stored when a hook refuses the write', async () => {
      const refused = await create({ title: 'refused by hook' }, { attachment: [pdf(), 'a.pdf'], picture: [png(4, 4), 'p.png'] });
      expect(refused.status).toBe(400);
      expect(refused.json.details.title).toEqual(['The hook refused it.']);
      expect((await storage.objects()).length).toBe(before);
    });

    it('refuses a file over its field maxBytes with 413 naming the field, storing nothing', async () => {
      const big = Buffer.concat([pdf(), Buffer.alloc(70 * 1024, 0x20)]);
      const refused = await create({ title: 'big' }, { attachment: [big, 'big.pdf'] });
      expect(refused.status).toBe(413);
      expect(refused.json.details.attachment[0]).toMatch(/at most 65536 bytes/);
      expect((await storage.objects()).length).toBe(before);
    });

    it('holds a field that declares no maxBytes to FILES_MAX_BYTES: 413 naming it, storing nothing', async () => {
      const refused = await create({ title: 'over the app cap' }, { kept: [Buffer.alloc(600 * 1024, 1), 'big.bin'] });
      expect(refused.status).toBe(413);
      expect(refused.json.details.kept[0]).toMatch(/at most 524288 bytes/);
      expect((await storage.objects()).length).toBe(before);
    });

    it('takes a file in a custom action’s declared body, by that body’s own rules', async () => {
      const scanned = await send(base, 'POST', '/api/v1/docs/scan/', { token: alice.token, form: formOf({ note: 'n' }, { scan: [pdf(), 's.pdf'] }) });
      expect(scanned.status, JSON.stringify(scanned.json)).toBe(200);
      expect(scanned.json).toEqual({ note: 'n', name: 's.pdf', size: pdf().length, type: 'application/pdf' });
      const big = await send(base, 'POST', '/api/v1/docs/scan/', { token: alice.token, form: formOf({ note: 'n' }, { scan: [Buffer.concat([pdf(), Buffer.alloc(2048, 0x20)]), 'big.pdf'] }) });
      expect(big.status).toBe(413);
      expect(big.json.details.scan[0]).toMatch(/at most 1024 bytes/);
    });

    it('stores nothing when the client goes away mid-upload', async () => {
      const boundary = 'restfold-cut-off';
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="kept"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
      const socket = connect(Number(new URL(base).port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        `POST /api/v1/docs/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${alice.token}\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${400 * 1024}\r\n\r\n${head}`,
      );
      socket.write(Buffer.alloc(300 * 1024, 1));
      // Long enough for the upload to reach the storage (on disk: a partial file).
      await new Promise((resolve) => setTimeout(resolve, 300));
      socket.destroy();
      let left = await storage.objects();
      for (let waited = 0; left.length !== before && waited < 5000; waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        left = await storage.objects();
      }
      expect(left).toHaveLength(before);
      expect((await create({ title: 'after the cut' })).status).toBe(201);
    });

    it('signs links for FILES_URL_TTL', async () => {
      const created = await create({ title: 'ttl' }, { kept: [Buffer.from('short-lived'), 'a.txt'] });
      const expires = Number(new URL(created.json.kept.url).searchParams.get('expires'));
      expect(expires - Date.now() / 1000).toBeGreaterThan(100);
      expect(expires - Date.now() / 1000).toBeLessThanOrEqual(120);
    });

    it('refuses a body over the global cap, and more parts than allowed, with 413', async () => {
      const huge = await create({ title: 'huge' }, { kept: [Buffer.alloc(2 * 1024 * 1024, 1), 'huge.bin'] });
      expect(huge.status).toBe(413);
      const parts = await create(Object.fromEntries(Array.from({ length: 12 }, (_, index) => [`f${index}`, 'x'])));
      expect(parts.status).toBe(413);
      // The connection stays usable after a refused body.
      expect((await create({ title: 'after' })).status).toBe(201);
      expect((await storage.objects()).length).toBe(before);
    });

    it('judges content by its bytes: a PNG that is really HTML, an SVG as an image, a type not accepted', async () => {
      const html = Buffer.from('<!doctype html><script>alert(document.cookie)</script>');
      const fake = await create({ title: 'fake' }, { picture: [html, 'cat.png', 'image/png'] });
      expect(fake.status).toBe(400);
      expect(fake.json.details.picture[0]).toMatch(/valid image/);
      const svg = await create({ title: 'svg' }, { picture: [Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>'), 'x.svg', 'image/svg+xml'] });
      expect(svg.status).toBe(400);
      const zip = await create({ title: 'zip' }, { attachment: [Buffer.from('504b0304140000000800', 'hex'), 'doc.pdf', 'application/pdf'] });
      expect(zip.status).toBe(400);
      expect(zip.json.details.attachment[0]).toMatch(/not allowed/);
      const tooWide = await create({ title: 'wide' }, { picture: [png(65, 10), 'wide.png'] });
      expect(tooWide.status).toBe(400);
      expect(tooWide.json.details.picture[0]).toMatch(/at most 64 pixels wide/);
      expect((await storage.objects()).length).toBe(before);
    });

    it('refuses a file field sent as JSON text, and a file part for a field that holds no file', async () => {
      const asJson = await send(base, 'POST', '/api/v1/docs/', { token: alice.token, json: { title: 'j', attachment: { url: 'http://evil/' } } });
      expect(asJson.status).toBe(400);
      expect(asJson.json.details.attachment[0]).toMatch(/multipart/);
      const wrongPart = await create({}, { title: [pdf(), 'a.pdf'] });
      expect(wrongPart.status).toBe(400);
      expect((await storage.objects()).length).toBe(before);
    });

    it('answers a malformed multipart body 400, never 500', async () => {
      const response = await fetch(`${base}/api/v1/docs/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'multipart/form-data; boundary=xyz' },
        body: '--xyz\r\nContent-Disposition: form-data; name="title"\r\n\r\nunterminated',
      });
      expect(response.status).toBe(400);
      const noBoundary = await fetch(`${base}/api/v1/docs/`, { method: 'POST', headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'multipart/form-data' }, body: 'x' });
      expect(noBoundary.status).toBe(400);
      expect((await storage.objects()).length).toBe(before);
    });
  });

  describe('replacing, clearing and deleting', () => {
    it('removes what it stored when the database refuses the row (a unique value taken)', async () => {
      expect((await create({ title: 'first', code: 'taken' }, { attachment: [pdf(), 'a.pdf'] })).status).toBe(201);
      const count = (await storage.objects()).length;
      const refused = await create({ title: 'second', code: 'taken' }, { attachment: [pdf(), 'b.pdf'], picture: [png(2, 2), 'p.png'] });
      expect(refused.status).toBe(400);
      expect(refused.json.details.code).toBeDefined();
      expect((await storage.objects()).length).toBe(count);
    });

    it('leaves exactly one object, the one the row names, after 20 concurrent replaces of one record', async () => {
      const created = await create({ title: 'raced' }, { attachment: [Buffer.from('version 0'), 'v0.txt'] });
      const count = (await storage.objects()).length;
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          send(base, 'PATCH', `/api/v1/docs/${created.json.id}/`, { token: alice.token, form: formOf({}, { attachment: [Buffer.from(`version ${index + 1}`), `v${index + 1}.txt`] }) }),
        ),
      );
      expect(replies.map((reply) => reply.status)).toEqual(Array.from({ length: 20 }, () => 200));
      expect((await storage.objects()).length).toBe(count);
      const row = await send(base, 'GET', `/api/v1/docs/${created.json.id}/`, { token: alice.token });
      const download = await send(base, 'GET', row.json.attachment.url);
      expect(download.status).toBe(200);
      expect(download.bytes.toString()).toBe(`version ${row.json.attachment.name.slice(1, -4)}`);
    });

    it('replaces on PATCH and PUT, removing the old object after the commit; the old link then 404s', async () => {
      const created = await create({ title: 'v1' }, { attachment: [pdf(), 'one.pdf'] });
      const oldUrl = created.json.attachment.url as string;
      const count = (await storage.objects()).length;
      const patched = await send(base, 'PATCH', `/api/v1/docs/${created.json.id}/`, { token: alice.token, form: formOf({}, { attachment: [Buffer.from('plain text, version two'), 'two.txt'] }) });
      expect(patched.status).toBe(200);
      expect(patched.json).toMatchObject({ title: 'v1', attachment: { name: 'two.txt', content_type: 'text/plain' } });
      expect((await storage.objects()).length).toBe(count);
      expect((await send(base, 'GET', oldUrl)).status).toBe(404);
      expect((await send(base, 'GET', patched.json.attachment.url)).bytes.toString()).toBe('plain text, version two');
      // With credentials, the record's path serves the file it holds now.
      expect((await send(base, 'GET', `/api/v1/docs/${created.json.id}/_files/attachment/`, { token: alice.token })).bytes.toString()).toBe('plain text, version two');
      const put = await send(base, 'PUT', `/api/v1/docs/${created.json.id}/`, { token: alice.token, form: formOf({ title: 'v3' }, { attachment: [pdf(), 'three.pdf'] }) });
      expect(put.status).toBe(200);
      expect(put.json.attachment.name).toBe('three.pdf');
      expect((await storage.objects()).length).toBe(count);
    });

    it('keeps the old object of a keep: true field, and a failed update keeps the row and its file', async () => {
      const created = await create({ title: 'keeps' }, { kept: [Buffer.from('first'), 'a.txt'] });
      const count = (await storage.objects()).length;
      await send(base, 'PATCH', `/api/v1/docs/${created.json.id}/`, { token: alice.token, form: formOf({}, { kept: [Buffer.from('second'), 'b.txt'] }) });
      expect((await storage.objects()).length).toBe(count + 1);
      const refused = await send(base, 'PATCH', `/api/v1/docs/${created.json.id}/`, { token: alice.token, form: formOf({ title: 'refused by hook' }, { attachment: [pdf(), 'x.pdf'] }) });
      expect(refused.status).toBe(400);
      expect((await storage.objects()).length).toBe(count + 1);
    });

    it('clears a nullable file with null in a JSON body, and removes objects when the record is deleted', async () => {
      const created = await create({ title: 'clear' }, { attachment: [pdf(), 'a.pdf'], picture: [png(2, 2), 'p.png'] });
      const count = (await storage.objects()).length;
      const cleared = await send(base, 'PATCH', `/api/v1/docs/${created.json.id}/`, { token: alice.token, json: { attachment: null } });
      expect(cleared.status).toBe(200);
      expect(cleared.json.attachment).toBeNull();
      expect((await storage.objects()).length).toBe(count - 1);
      const pictureUrl = cleared.json.picture.url as string;
      expect((await send(base, 'DELETE', `/api/v1/docs/${created.json.id}/`, { token: alice.token })).status).toBe(204);
      expect((await storage.objects()).length).toBe(count - 2);
      expect((await send(base, 'GET', pictureUrl)).status).toBe(404);
    });
  });

  describe('links and downloads', () => {
    let doc: { id: number; attachment: { url: string }; picture: { url: string } };
    beforeAll(async () => {
      doc = (await create({ title: 'downloads' }, { attachment: [Buffer.from('0123456789'), 'naïve report; 1.txt'], picture: [png(3, 3), 'p.png'] })).json;
    });

    it('renders links only where the record is seen: another user sees neither the record nor a link', async () => {
      const list = await send(base, 'GET', '/api/v1/docs/', { token: bob.token });
      expect(list.status).toBe(200);
      expect(list.json.results).toEqual([]);
      expect((await send(base, 'GET', `/api/v1/docs/${doc.id}/`, { token: bob.token })).status).toBe(404);
      const own = await send(base, 'GET', '/api/v1/docs/', { token: alice.token });
      const urls = (own.json.results as { attachment: { url: string } | null }[]).map((row) => row.attachment?.url).filter(Boolean);
      expect(urls.length).toBeGreaterThan(0);
    });

    it('serves a link without credentials, with the stored type, ETag, length, nosniff, sandbox and an attachment name', async () => {
      const response = await send(base, 'GET', doc.attachment.url);
      expect(response.status).toBe(200);
      expect(response.bytes.toString()).toBe('0123456789');
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(response.headers.get('content-length')).toBe('10');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('content-security-policy')).toMatch(/sandbox/);
      expect(response.headers.get('etag')).toMatch(/^"[\w-]+"$/);
      const disposition = response.headers.get('content-disposition')!;
      expect(disposition).toMatch(/^attachment; filename="na_ve report_ 1.txt"; filename\*=UTF-8''na%C3%AFve%20report%3B%201.txt$/);
      const image = await send(base, 'GET', doc.picture.url);
      expect(image.headers.get('content-disposition')).toMatch(/^inline;/);
      expect(image.headers.get('content-type')).toBe('image/png');
      const head = await fetch(doc.attachment.url, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe('10');
      const again = await send(base, 'GET', doc.attachment.url, { headers: { 'if-none-match': response.headers.get('etag')! } });
      expect(again.status).toBe(304);
    });

    it('answers ranges with 206, and an unsatisfiable one with 416', async () => {
      const part = await send(base, 'GET', doc.attachment.url, { headers: { range: 'bytes=2-5' } });
      expect(part.status).toBe(206);
      expect(part.bytes.toString()).toBe('2345');
      expect(part.headers.get('content-range')).toBe('bytes 2-5/10');
      const tail = await send(base, 'GET', doc.attachment.url, { headers: { range: 'bytes=-3' } });
      expect(tail.bytes.toString()).toBe('789');
      const open = await send(base, 'GET', doc.attachment.url, { headers: { range: 'bytes=7-' } });
      expect(open.bytes.toString()).toBe('789');
      const beyond = await send(base, 'GET', doc.attachment.url, { headers: { range: 'bytes=10-20' } });
      expect(beyond.status).toBe(416);
      expect(beyond.headers.get('content-range')).toBe('bytes */10');
    });

    it('serves the link path with ordinary credentials, no signature, to whoever may see the record; Range too', async () => {
      const path = `/api/v1/docs/${doc.id}/_files/attachment/`;
      const own = await send(base, 'GET', path, { token: alice.token });
      expect(own.status).toBe(200);
      expect(own.bytes.toString()).toBe('0123456789');
      expect(own.headers.get('content-disposition')).toMatch(/^attachment;/);
      expect(own.headers.get('x-content-type-options')).toBe('nosniff');
      const part = await send(base, 'GET', path, { token: alice.token, headers: { range: 'bytes=2-5' } });
      expect(part.status).toBe(206);
      expect(part.bytes.toString()).toBe('2345');
      // As the record's GET answers: another user does not see it, an anonymous caller is not authenticated.
      expect((await send(base, 'GET', path, { token: bob.token })).status).toBe(404);
      const anonymous = await send(base, 'GET', path);
      expect(anonymous.status).toBe(401);
      expect(anonymous.json.code).toBe('not_authenticated');
      // A field that holds no file, or an empty one, has no download.
      expect((await send(base, 'GET', `/api/v1/docs/${doc.id}/_files/title/`, { token: alice.token })).status).toBe(404);
      expect((await send(base, 'GET', `/api/v1/docs/${doc.id}/_files/kept/`, { token: alice.token })).status).toBe(404);
    });

    it('carries the file object in live events, with a signed link the subscriber can download', async () => {
      const events = await openEvents(`${base}/api/v1/docs/events/`, { authorization: `Bearer ${alice.token}` });
      try {
        expect(events.status).toBe(200);
        const created = await create({ title: 'live' }, { attachment: [Buffer.from('live bytes'), 'live.txt'] });
        const event = await events.next();
        expect(event.data).toMatchObject({ id: created.json.id, attachment: { name: 'live.txt', content_type: 'text/plain' } });
        const download = await send(base, 'GET', event.data.attachment.url);
        expect(download.status).toBe(200);
        expect(download.bytes.toString()).toBe('live bytes');
      } finally {
        events.close();
      }
    });

    it('answers a link past its expiry 403, and one naming a part of its query twice 404', async () => {
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3 * 60_000 });
      try {
        const late = await send(base, 'GET', doc.attachment.url);
        expect(late.status).toBe(403);
        expect(JSON.stringify(late.json)).toMatch(/expired/);
      } finally {
        vi.useRealTimers();
      }
      const twice = new URL(doc.attachment.url);
      twice.searchParams.append('key', twice.searchParams.get('key')!);
      expect((await send(base, 'GET', twice.href)).status).toBe(404);
    });

    it('refuses a tampered link or one for another key (404), and an expired one', async () => {
      const url = new URL(doc.attachment.url);
      url.searchParams.set('name', 'other.html');
      expect((await send(base, 'GET', url.href)).status).toBe(404);
      const other = new URL(doc.picture.url);
      const swapped = new URL(doc.attachment.url);
      swapped.pathname = other.pathname;
      expect((await send(base, 'GET', swapped.href)).status).toBe(404);
      const expired = new URL(doc.attachment.url);
      expired.searchParams.set('expires', '1000');
      expect((await send(base, 'GET', expired.href)).status).toBe(404);
      const foreign = new URL(doc.attachment.url);
      foreign.searchParams.set('key', '../../etc/passwd');
      expect((await send(base, 'GET', foreign.href)).status).toBe(404);
    });
  });

  describe('recordStore', () => {
    const docs = () => recordStore(api.database, serializer(Doc, { fields: docFields }), { name: 'doc' });

    it('creates and updates records with files from a Buffer, a stream and a file: URL, judged as uploads; links under the app prefix', async () => {
      const before = (await storage.objects()).length;
      const path = join(tmpdir(), `restfold-store-${kind}-${Date.now()}.png`);
      await writeFile(path, png(6, 7));
      const created = await docs().create({ title: 'from code', attachment: pdf(), picture: pathToFileURL(path) }, { owner_id: alice.id });
      expect(created.attachment).toMatchObject({ name: 'attachment', content_type: 'application/pdf', size: pdf().length });
      expect(created.picture).toMatchObject({ name: path.slice(path.lastIndexOf('/') + 1), content_type: 'image/png', width: 6, height: 7 });
      expect((await storage.objects()).length).toBe(before + 2);
      const url = (created.attachment as { url: string }).url;
      expect(url).toMatch(new RegExp(`^/api/v1/docs/${created.id}/_files/attachment/\\?key=`));
      expect((await send(base, 'GET', url)).bytes.equals(pdf())).toBe(true);

      const updated = await docs().update(created.id as number, () => ({ attachment: Readable.from([Buffer.from('replaced '), Buffer.from('by a stream')]) }));
      expect(updated.attachment).toMatchObject({ content_type: 'text/plain', size: 20 });
      expect((await storage.objects()).length).toBe(before + 2);
      expect((await send(base, 'GET', url)).status).toBe(404);
      expect((await send(base, 'GET', (updated.attachment as { url: string }).url)).bytes.toString()).toBe('replaced by a stream');

      await docs().delete(created.id as number);
      expect((await storage.objects()).length).toBe(before);
    });

    it('refuses what an upload would be refused for, leaving nothing stored; a text is never a path', async () => {
      const before = (await storage.objects()).length;
      const fake = docs().create({ title: 'fake', attachment: pdf(), picture: Readable.from([Buffer.from('<html><script>alert(1)</script>')]) }, { owner_id: alice.id });
      await expect(fake).rejects.toMatchObject({ status: 400, details: { picture: [expect.stringMatching(/valid image/)] } });
      const big = docs().create({ title: 'big', attachment: Buffer.concat([pdf(), Buffer.alloc(70 * 1024, 0x20)]) }, { owner_id: alice.id });
      await expect(big).rejects.toMatchObject({ status: 400, details: { attachment: [expect.stringMatching(/at most 65536 bytes/)] } });
      const refused = docs().create({ title: 'refused by code', code: 'x'.repeat(30), attachment: pdf() }, { owner_id: alice.id });
      await expect(refused).rejects.toMatchObject({ status: 400, details: { code: expect.anything() } });
      const path = docs().create({ title: 'path', attachment: '/etc/passwd' }, { owner_id: alice.id });
      await expect(path).rejects.toMatchObject({ status: 400, details: { attachment: [expect.stringMatching(/multipart/)] } });
      expect((await storage.objects()).length).toBe(before);
    });
  });

  describe('the OpenAPI document', () => {
    it('describes multipart request bodies with binary file parts, and the file object in records', async () => {
      const document = (await send(base, 'GET', '/api/v1/schema/')).json;
      const post = document.paths['/api/v1/docs/'].post;
      const multipart = post.requestBody.content['multipart/form-data'];
      expect(multipart).toBeDefined();
      expect(post.requestBody.content['application/json']).toBeDefined();
      const text = JSON.stringify(document);
      expect(text).toContain('"format":"binary"');
      expect(post.responses['201'].content['application/json'].schema.$ref).toBe('#/components/schemas/FileDoc');
      const record = document.components.schemas.FileDoc;
      expect(record.properties.picture.properties).toMatchObject({ url: { type: 'string' }, content_type: { type: 'string' }, width: { type: 'integer' } });
      expect(record.properties.attachment.type).toEqual(['object', 'null']);
    });

    it('describes the download: its file fields, Range and 206, and a signed link\'s query as the links carry it', async () => {
      const document = (await send(base, 'GET', '/api/v1/schema/')).json;
      expect(await lintProblems(document)).toEqual([]);
      const download = document.paths['/api/v1/docs/{id}/_files/{fileField}/'].get;
      const parameters = (place: string): { name: string; schema: { enum?: string[] } }[] => download.parameters.filter((parameter: { in: string }) => parameter.in === place);
      expect(parameters('path').find(({ name }) => name === 'fileField')!.schema.enum).toEqual(['attachment', 'picture', 'kept']);
      expect(parameters('header').map(({ name }) => name)).toContain('Range');
      const created = await create({ title: 'documented' }, { attachment: [pdf(), 'a.pdf'] });
      const linkQuery = [...new URL(created.json.attachment.url as string, base).searchParams.keys()];
      expect(parameters('query').map(({ name }) => name).sort()).toEqual(linkQuery.sort());
      expect(download.responses['200'].content['*/*'].schema.format).toBe('binary');
      expect(download.responses['206'].headers['Content-Range']).toBeDefined();
      expect(Object.keys(download.responses)).toEqual(expect.arrayContaining(['304', '403', '404', '416']));
      // A signed link needs no credential.
      expect(download.security).toContainEqual({});
    });
  });
});

describe('files on disk, their folder changed under the server', () => {
  const Broken = model('broken_docs', { id: fields.id(), kept: fields.file({ nullable: true }) });
  const brokenApp = withGeneratedMigrations(defineApp({ collections: [collection('broken', { serializer: serializer(Broken, { fields: ['id', 'kept'] }), permissions: [isAuthenticated] })] }));
  let storage: TestStorage;
  let folder: string;
  let api: TestApi;
  let base: string;
  let alice: TestUser;

  beforeAll(async () => {
    storage = await diskTestStorage();
    folder = join(storage.env.FILES_STORAGE!.slice('file:'.length), 'broken_docs');
    api = await startApi({ LOG_LEVEL: 'fatal', ...storage.env }, brokenApp);
    base = `http://127.0.0.1:${await api.listen()}`;
    alice = await api.user('brokenalice');
  });
  afterAll(async () => {
    await api.close();
    await storage.close();
  });

  const upload = (bytes: Buffer) => send(base, 'POST', '/api/v1/broken/', { token: alice.token, form: formOf({}, { kept: [bytes, 'a.bin'] }) });

  it('stores into a folder removed since the last upload', async () => {
    expect((await upload(Buffer.from('first'))).status).toBe(201);
    await rm(folder, { recursive: true });
    const again = await upload(Buffer.from('second'));
    expect(again.status).toBe(201);
    expect((await send(base, 'GET', again.json.kept.url)).bytes.toString()).toBe('second');
  });

  it('answers the server error when the storage fails mid-upload, once the whole body is read, and the connection serves the next request', async () => {
    // The folder is a file: storing fails once the upload's first bytes are judged.
    await rm(folder, { recursive: true, force: true });
    await writeFile(folder, 'not a folder');
    // Larger than the sniffing head and than the buffers between the parser and the storage: the rest of it must still be read.
    const failed = await upload(Buffer.alloc(2 * 1024 * 1024, 1));
    expect(failed.status).toBe(500);
    expect(failed.json).toMatchObject({ code: 'server_error' });
    expect((await send(base, 'GET', '/api/v1/broken/', { token: alice.token })).status).toBe(200);
  });
});
