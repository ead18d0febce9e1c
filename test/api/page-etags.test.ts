/**
 * Caches and browsers keep one answer per URL unless told what else it
 * depends on: collection answers say `Vary: Accept, Authorization, Cookie`, and
 * a browsable page's ETag names its viewer, so logging in is never answered
 * 304 with the anonymous page. The JSON's ETag stays the data's (If-Match).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PASSWORD, startApi, type TestApi, type TestUser } from '../support/api.js';
import { openPeople } from '../support/open-app.js';

const html = { accept: 'text/html' };
let api: TestApi;
let alice: TestUser;
let bob: TestUser;

beforeEach(async () => {
  api = await startApi({ API_REQUIRE_AUTH: 'false' }, openPeople);
  alice = await api.user('alice');
  bob = await api.user('bob');
});
afterEach(() => api.close());

const varied = (vary: unknown) => String(vary).split(',').map((name) => name.trim().toLowerCase());

describe('Vary on collection answers', () => {
  it('names Accept, Authorization and Cookie on lists and details, JSON and HTML, errors included', async () => {
    for (const url of ['/api/v1/people/', `/api/v1/people/${bob.id}/`, '/api/v1/people/999999/']) {
      for (const headers of [{}, html]) {
        for (const token of [undefined, alice.token]) {
          const reply = await api.request('GET', url, { headers, token });
          expect(varied(reply.headers.vary), `${url} ${JSON.stringify(headers)}`).toEqual(expect.arrayContaining(['accept', 'authorization', 'cookie']));
        }
      }
    }
  });

  it('keeps the Origin that CORS varies on', async () => {
    const cors = await startApi({ API_REQUIRE_AUTH: 'false', CORS_ORIGINS: 'https://app.example' }, openPeople);
    try {
      const reply = await cors.request('GET', '/api/v1/people/', { headers: { origin: 'https://app.example' } });
      expect(varied(reply.headers.vary)).toEqual(expect.arrayContaining(['origin', 'accept', 'authorization', 'cookie']));
    } finally {
      await cors.close();
    }
  });
});

describe('the ETag of a browsable page', () => {
  it('differs from the JSON one, and between anonymous, one user and another, on lists and details', async () => {
    for (const url of ['/api/v1/people/', `/api/v1/people/${bob.id}/`]) {
      const json = (await api.request('GET', url, { token: alice.token })).headers.etag;
      const tags = [
        json,
        (await api.request('GET', url, { headers: html })).headers.etag,
        (await api.request('GET', url, { headers: html, token: alice.token })).headers.etag,
        (await api.request('GET', url, { headers: html, token: bob.token })).headers.etag,
      ];
      for (const tag of tags) expect(tag).toMatch(/^(W\/)?"[A-Za-z0-9_-]+"$/);
      expect(new Set(tags).size, url).toBe(4);
      // The JSON ETag is the data's: the same for every reader.
      expect((await api.request('GET', url, { token: bob.token })).headers.etag).toBe(json);
    }
  });

  it('answers 304 to its own viewer only: after logging in, the anonymous page\'s tag gets the signed-in page', async () => {
    const url = '/api/v1/people/';
    const anonymous = await api.request('GET', url, { headers: html });
    expect(anonymous.body).toContain('Log in');
    const again = await api.request('GET', url, { headers: { ...html, 'if-none-match': String(anonymous.headers.etag) } });
    expect(again.status).toBe(304);

    const login = await api.request('POST', '/api/v1/auth/login/', { body: { username: 'alice', password: PASSWORD } });
    const cookie = String([login.headers['set-cookie']].flat()[0]).split(';')[0]!;
    const signedIn = await api.request('GET', url, { headers: { ...html, cookie, 'if-none-match': String(anonymous.headers.etag) } });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toContain('Logged in as');
    const current = await api.request('GET', url, { headers: { ...html, cookie, 'if-none-match': String(signedIn.headers.etag) } });
    expect(current.status).toBe(304);
  });

  it('is never what If-Match takes: a write with the JSON ETag succeeds, one with the page ETag is 412', async () => {
    const url = `/api/v1/people/${bob.id}/`;
    const page = (await api.request('GET', url, { headers: html, token: alice.token })).headers.etag;
    const refused = await api.request('PATCH', url, { token: alice.token, body: { email: 'b@example.org' }, headers: { 'if-match': String(page) } });
    expect(refused.status).toBe(412);
    const json = (await api.request('GET', url, { token: alice.token })).headers.etag;
    const accepted = await api.request('PATCH', url, { token: alice.token, body: { email: 'b@example.org' }, headers: { 'if-match': String(json) } });
    expect(accepted.status).toBe(200);
  });

  it('shows the JSON ETag in the page, the one a reader would send back in If-Match', async () => {
    const url = `/api/v1/people/${bob.id}/`;
    const json = String((await api.request('GET', url, { token: alice.token })).headers.etag);
    const page = await api.request('GET', url, { headers: html, token: alice.token });
    expect(page.body).toContain(`etag: ${json.replace(/"/g, '&quot;')}`);
  });
});
