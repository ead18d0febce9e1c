/**
 * The admin's forms with files: the staff check and the CSRF field (first in the form, as Django
 * puts it) come before a byte of a file is read; the body then streams on to the API's own
 * multipart parsing, so an oversize or malformed post gets the API's 413 or 400 and nothing is
 * stored; a nullable file is cleared with its clear box.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineApp } from '../../src/framework/index.js';
import { PASSWORD, startApi, type TestApi } from '../support/api.js';
import { loggedIn, makeStaff, type AdminClient } from '../support/admin-client.js';
import { formOf, objectsIn, pdf, png } from '../support/files.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { posters } from '../support/posters.js';

const MAX_BODY = 1024 * 1024;

let api: TestApi;
let folder: string;
let base: string;
let boss: AdminClient;
let readerToken: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'restfold-admin-uploads-'));
  api = await startApi({ FILES_STORAGE: `file:${folder}`, FILES_MAX_PARTS: '10', FILES_MAX_BODY_BYTES: String(MAX_BODY) }, withGeneratedMigrations(defineApp({ collections: [posters] })));
  await makeStaff(api, (await api.user('boss', { superuser: true })).id);
  await makeStaff(api, (await api.user('viewer', { permissions: ['posters.view'] })).id);
  await api.user('outsider', { superuser: true });
  readerToken = (await api.user('reader')).token;
  base = `http://127.0.0.1:${await api.listen()}`;
  boss = await loggedIn(api, 'boss');
  await boss.get('/admin/posters/add/');
});
afterAll(async () => {
  await api.close();
  await rm(folder, { recursive: true, force: true });
});

const cookieOf = (client: AdminClient): string => [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');

/** `form` posted over a socket as a browser posts a form with files; `chunked`: without a Content-Length, as a stream. */
async function post(client: AdminClient, url: string, form: FormData, chunked = false, more: Record<string, string> = {}): Promise<{ status: number; body: string; location: string | null }> {
  const encoded = new Response(form);
  const bytes = Buffer.from(await encoded.arrayBuffer());
  const headers = { ...more, cookie: cookieOf(client), 'content-type': encoded.headers.get('content-type')!, accept: 'text/html' };
  const body = chunked
    ? new ReadableStream({
        start(controller) {
          for (let at = 0; at < bytes.length; at += 16 * 1024) controller.enqueue(bytes.subarray(at, at + 16 * 1024));
          controller.close();
        },
      })
    : bytes;
  const response = await fetch(`${base}${url}`, { method: 'POST', headers, body, redirect: 'manual', duplex: 'half' } as RequestInit);
  return { status: response.status, body: await response.text(), location: response.headers.get('location') };
}

/** The same multipart body sent straight to the API, with the session's cookie and CSRF header. */
async function postToApi(client: AdminClient, form: FormData): Promise<number> {
  const response = await fetch(`${base}/api/v1/posters/`, { method: 'POST', headers: { cookie: cookieOf(client), 'x-csrf-token': client.csrf }, body: form });
  await response.arrayBuffer();
  return response.status;
}

async function titles(): Promise<string[]> {
  const reply = await api.request('GET', '/api/v1/posters/?ordering=id', { token: readerToken });
  return (reply.json as { results: { title: string }[] }).results.map(({ title }) => title);
}

describe('a form with files', () => {
  it('is refused without its CSRF field, or with it after a file, before anything is stored, even past the body limit', async () => {
    const before = await titles();
    const file = { picture: [png(8, 8), 'x.png', 'image/png'] as [Buffer, string, string] };
    expect((await post(boss, '/admin/posters/add/', formOf({ title: 'No token' }, file))).status).toBe(403);
    expect((await post(boss, '/admin/posters/add/', formOf({ csrfmiddlewaretoken: 'forged', title: 'Forged' }, file))).status).toBe(403);
    // The token after the file: the file would be read first, so the form is refused.
    const late = formOf({ title: 'Late token' }, file);
    late.append('csrfmiddlewaretoken', boss.csrf);
    expect((await post(boss, '/admin/posters/add/', late)).status).toBe(403);
    // Past the limit, the CSRF refusal comes first: the body was never parsed.
    const huge = { leaflet: [Buffer.alloc(2 * MAX_BODY), 'big.pdf', 'application/pdf'] as [Buffer, string, string] };
    expect((await post(boss, '/admin/posters/add/', formOf({ title: 'Huge' }, huge))).status).toBe(403);
    expect(await objectsIn(folder)).toEqual([]);
    expect(await titles()).toEqual(before);
  });

  it('is turned away for a user who is not staff, or has no add permission, before its body is parsed', async () => {
    const huge = { leaflet: [Buffer.alloc(2 * MAX_BODY), 'big.pdf', 'application/pdf'] as [Buffer, string, string] };
    const small = { picture: [png(8, 8), 'x.png', 'image/png'] as [Buffer, string, string] };
    // Not staff, with its own session and token: to the login page, not 413, so the body was never parsed.
    const session = await api.request('POST', '/api/v1/auth/login/', { body: { username: 'outsider', password: PASSWORD } });
    const cookie = String([session.headers['set-cookie']].flat()[0]).split(';')[0]!;
    const token = (session.json as { csrf_token: string }).csrf_token;
    for (const files of [huge, small]) {
      const encoded = new Response(formOf({ csrfmiddlewaretoken: token, title: 'Outsider' }, files));
      const response = await fetch(`${base}/admin/posters/add/`, { method: 'POST', headers: { cookie, 'content-type': encoded.headers.get('content-type')! }, body: Buffer.from(await encoded.arrayBuffer()), redirect: 'manual' });
      await response.arrayBuffer();
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toMatch(/^\/admin\/login\/\?next=/);
    }
    // Staff with view only: 403 before the body is read.
    const viewer = await loggedIn(api, 'viewer');
    await viewer.get('/admin/posters/');
    for (const files of [huge, small]) expect((await post(viewer, '/admin/posters/add/', formOf({ csrfmiddlewaretoken: viewer.csrf, title: 'Viewer' }, files))).status).toBe(403);
    expect(await objectsIn(folder)).toEqual([]);
  });

  it('past the body limit gets the API\'s 413, declared or sent chunked, nothing stored, and the connection serves on', async () => {
    const form = () => formOf({ csrfmiddlewaretoken: boss.csrf, title: 'Huge' }, { picture: [png(8, 8), 'x.png', 'image/png'], leaflet: [Buffer.concat([pdf(), Buffer.alloc(MAX_BODY)]), 'big.pdf', 'application/pdf'] });
    expect(await postToApi(boss, form())).toBe(413);
    expect((await post(boss, '/api/v1/posters/', form(), true, { 'x-csrf-token': boss.csrf })).status).toBe(413);
    for (const chunked of [false, true]) {
      const refused = await post(boss, '/admin/posters/add/', form(), chunked);
      expect(refused.status).toBe(413);
      expect(refused.body).toContain(`<p class="message error" role="alert">The body is larger than ${MAX_BODY} bytes.</p>`);
      // The form is shown again with what was typed, where the API read it before the limit.
      if (chunked) expect(refused.body).toContain('value="Huge"');
    }
    expect(await objectsIn(folder)).toEqual([]);
    expect(await titles()).not.toContain('Huge');
    expect((await boss.get('/admin/posters/')).status).toBe(200);
  });

  it('that is malformed after its CSRF field gets the API\'s 400, nothing stored', async () => {
    const boundary = 'x-boundary';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="csrfmiddlewaretoken"\r\n\r\n${boss.csrf}\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="picture"; filename="x.png"\r\nContent-Type: image/png\r\n\r\n`),
      png(8, 8),
      // The body ends inside the file, without its closing boundary.
    ]);
    const headers = { cookie: cookieOf(boss), 'content-type': `multipart/form-data; boundary=${boundary}` };
    const toAdmin = await fetch(`${base}/admin/posters/add/`, { method: 'POST', headers, body, redirect: 'manual' });
    await toAdmin.arrayBuffer();
    const toApi = await fetch(`${base}/api/v1/posters/`, { method: 'POST', headers: { ...headers, 'x-csrf-token': boss.csrf }, body });
    await toApi.arrayBuffer();
    expect(toApi.status).toBe(400);
    expect(toAdmin.status).toBe(400);
    expect(await objectsIn(folder)).toEqual([]);
  });

  it("takes the token from the X-CSRFToken header too (Django's), the body then unread before the check", async () => {
    const file = { picture: [png(8, 8), 'x.png', 'image/png'] as [Buffer, string, string] };
    // A form with files, none chosen (the suite's later tests count the objects stored).
    const saved = await post(boss, '/admin/posters/add/', formOf({ title: 'By header', _save: '' }), false, { 'x-csrftoken': boss.csrf });
    expect(saved.status).toBe(302);
    expect(await titles()).toContain('By header');
    // A wrong header is refused as a wrong field is, past the body limit too (the body never parsed).
    const huge = { leaflet: [Buffer.alloc(2 * MAX_BODY), 'big.pdf', 'application/pdf'] as [Buffer, string, string] };
    for (const files of [file, huge]) expect((await post(boss, '/admin/posters/add/', formOf({ title: 'Forged header' }, files), false, { 'x-csrftoken': 'forged' })).status).toBe(403);
    expect(await titles()).not.toContain('Forged header');
    // A form without files takes it too.
    const plain = await api.app.inject({
      method: 'POST',
      url: '/admin/posters/add/',
      headers: { cookie: cookieOf(boss), 'x-csrftoken': boss.csrf, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ title: 'Plain by header', _save: '' }).toString(),
    });
    expect(plain.statusCode).toBe(302);
    expect(await titles()).toContain('Plain by header');
  });

  it('that is malformed before its CSRF field gets a 400 page (no token to check: as a CSRF refusal, no form), nothing stored', async () => {
    const boundary = 'x-boundary';
    const bodies = [
      // A part whose headers never end.
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="title"\r\nBroken`),
      // The body ends inside the first field, before the token's part.
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\nCut short`),
    ];
    for (const body of bodies) {
      const reply = await fetch(`${base}/admin/posters/add/`, { method: 'POST', headers: { cookie: cookieOf(boss), 'content-type': `multipart/form-data; boundary=${boundary}`, accept: 'text/html' }, body, redirect: 'manual' });
      const page = await reply.text();
      expect(reply.status).toBe(400);
      expect(page).toContain('<h1>Bad request</h1>');
      expect(page).toContain('Malformed multipart body: Unexpected end of form');
      expect(page).not.toContain('name="title"');
    }
    // No boundary at all.
    const unbounded = await fetch(`${base}/admin/posters/add/`, { method: 'POST', headers: { cookie: cookieOf(boss), 'content-type': 'multipart/form-data' }, body: 'x', redirect: 'manual' });
    await unbounded.arrayBuffer();
    expect(unbounded.status).toBe(400);
    // Without a session, the same: nothing about the admin is shown.
    const anonymous = await fetch(`${base}/admin/posters/add/`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body: bodies[1], redirect: 'manual' });
    expect(anonymous.status).toBe(400);
    expect(await anonymous.text()).not.toContain('Welcome');
    expect(await objectsIn(folder)).toEqual([]);
  });

  it('whose file arrives in one chunk past the bytes read to sniff it (as an in-process client sends it) is stored whole', async () => {
    const big = Buffer.concat([pdf(), Buffer.alloc(512 * 1024, 0x20)]);
    const sent = async (url: string, fields: Record<string, string>, headers: Record<string, string>) => {
      const encoded = new Response(formOf(fields, { leaflet: [big, 'big.pdf', 'application/pdf'] }));
      const payload = Buffer.from(await encoded.arrayBuffer());
      return api.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': encoded.headers.get('content-type')! }, payload });
    };
    const toApi = await sent('/api/v1/posters/', { title: 'One chunk' }, { authorization: `Bearer ${readerToken}` });
    expect(toApi.statusCode).toBe(201);
    expect(toApi.json().leaflet.size).toBe(big.length);
    const toAdmin = await sent('/admin/posters/add/', { csrfmiddlewaretoken: boss.csrf, title: 'One chunk too', _continue: '' }, { cookie: cookieOf(boss) });
    expect(toAdmin.statusCode).toBe(302);
    expect(await titles()).toEqual(expect.arrayContaining(['One chunk', 'One chunk too']));
    for (const id of [toApi.json().id, /\/admin\/posters\/(\d+)\/change\//.exec(toAdmin.headers.location as string)![1]]) {
      expect((await api.request('DELETE', `/api/v1/posters/${id}/`, { token: readerToken })).status).toBe(204);
    }
    expect(await objectsIn(folder)).toEqual([]);
  });

  it('clears a nullable file with its clear box, and its object goes; a file chosen with it wins', async () => {
    const added = await post(boss, '/admin/posters/add/', formOf({ csrfmiddlewaretoken: boss.csrf, title: 'Spring', _continue: '' }, { picture: [png(8, 8), 'spring.png', 'image/png'], leaflet: [pdf(), 'spring.pdf', 'application/pdf'] }));
    expect(added.status).toBe(302);
    const change = added.location!;
    expect(await objectsIn(folder)).toHaveLength(2);
    const page = await boss.get(change);
    expect(page.body).toContain('<input type="checkbox" name="picture-clear" data-clear="picture"/> clear');
    expect(page.body).toContain('<input type="checkbox" name="leaflet-clear" data-clear="leaflet"/> clear');
    // The box ticked, as a browser without script posts it (with the empty file input).
    const cleared = await post(boss, change, formOf({ csrfmiddlewaretoken: boss.csrf, title: 'Spring', 'picture-clear': 'on', _continue: '' }, { picture: [Buffer.alloc(0), '', 'application/octet-stream'] }));
    expect(cleared.status).toBe(302);
    const id = /\/admin\/posters\/(\d+)\/change\//.exec(change)![1]!;
    const record = (await api.request('GET', `/api/v1/posters/${id}/`, { token: readerToken })).json as { picture: unknown; leaflet: { name: string } };
    expect(record.picture).toBeNull();
    expect(record.leaflet.name).toBe('spring.pdf');
    expect(await objectsIn(folder)).toHaveLength(1);
    expect((await boss.get(change)).body).not.toContain('name="picture-clear"');
    // Ticked with a new file chosen: the new file is stored (Django would ask for one or the other).
    const replaced = await post(boss, change, formOf({ csrfmiddlewaretoken: boss.csrf, title: 'Spring', 'leaflet-clear': 'on', _save: '' }, { leaflet: [pdf(), 'autumn.pdf', 'application/pdf'] }));
    expect(replaced.status).toBe(302);
    expect(replaced.location).toBe('/admin/posters/');
    const after = (await api.request('GET', `/api/v1/posters/${id}/`, { token: readerToken })).json as { leaflet: { name: string } };
    expect(after.leaflet.name).toBe('autumn.pdf');
    expect(await objectsIn(folder)).toHaveLength(1);
  });
});
