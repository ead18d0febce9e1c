import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi;
let admin: TestUser;
const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

beforeAll(async () => {
  api = await startApi();
  admin = await api.user('admin', { superuser: true });
});
afterAll(() => api.close());

const page = (url: string, token?: string) => api.request('GET', url, { token: token ?? admin.token, headers: browser });

describe('the browsable API', () => {
  it('renders a list page with the JSON result, status, headers, pagination and controls', async () => {
    for (let i = 0; i < 3; i++) await api.user(`reader${i}`);
    const reply = await page('/api/v1/users/?page_size=2&ordering=-username');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.body).toMatch(/^<!doctype html>/);
    expect(reply.body).toContain('HTTP 200 OK');
    expect(reply.body).toContain('&quot;count&quot;: 4');
    expect(reply.body).toContain('rel="next"');
    expect(reply.body).toContain('name="search"');
    expect(reply.body).toMatch(/<option value="-username" selected[^>]*>username descending/);
    expect(reply.body).toContain('data-field="date_joined"');
    expect(reply.body).toContain('data-method="POST"');
    expect(reply.body).toContain('Logged in as <strong>admin</strong>');
  });

  it('renders a detail page with edit and delete forms filled from the record', async () => {
    const reply = await page(`/api/v1/users/${admin.id}/`);
    expect(reply.body).toContain('data-method="PUT"');
    expect(reply.body).toContain('data-method="PATCH"');
    expect(reply.body).toContain('id="delete"');
    expect(reply.body).toMatch(/name="username"[^>]*value="admin"/);
    expect(reply.body).not.toMatch(/name="password"[^>]*value=/);
  });

  it('renders errors in the page, with a login form for anonymous browsers', async () => {
    const reply = await api.request('GET', '/api/v1/users/', { headers: browser });
    expect(reply.status).toBe(401);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.body).toContain('HTTP 401 Unauthorized');
    expect(reply.body).toContain('id="login"');
  });

  it('gives a browser JSON with format=json, and JSON to clients that accept anything', async () => {
    const forced = await page('/api/v1/users/?format=json');
    expect(forced.headers['content-type']).toMatch(/^application\/json/);
    expect(forced.json.count).toBeGreaterThan(0);
    const anything = await api.request('GET', '/api/v1/users/', { token: admin.token, headers: { accept: '*/*' } });
    expect(anything.headers['content-type']).toMatch(/^application\/json/);
  });

  it('escapes record data: <script> and attribute breakers render as text', async () => {
    const hostile = '"><img src=x onerror=alert(1)><script>alert(2)</script>';
    const article = await api.request('POST', '/api/v1/articles/', { token: admin.token, body: { title: hostile, body: '<script>alert(3)</script>' } });
    expect(article.status).toBe(201);
    for (const url of ['/api/v1/articles/', `/api/v1/articles/${article.json.id}/`, `/api/v1/articles/?search=${encodeURIComponent(hostile)}`]) {
      const reply = await page(url);
      expect(reply.status).toBe(200);
      expect(reply.body).not.toContain('<script>alert');
      expect(reply.body).not.toContain('<img src=x');
      expect(reply.body).toContain('&lt;script>alert(2)&lt;/script>');
    }
  });

  it('serves its script and style sheet itself', async () => {
    const script = await api.request('GET', '/api/static/browsable.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.body).toContain("'Content-Type'");
    expect((await api.request('GET', '/api/static/browsable.css')).status).toBe(200);
  });
});
