/**
 * The Swagger UI gets the browsable pages' lockdown headers; a CORS preflight
 * allows every method a collection serves.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../support/api.js';

let api: TestApi | undefined;
afterEach(() => api?.close());

describe('security headers on /api/docs/', () => {
  it('sends the same-origin CSP, no framing and no sniffing with the Swagger UI page', async () => {
    api = await startApi();
    const reply = await api.request('GET', '/api/docs/', { headers: { accept: 'text/html' } });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toContain('text/html');
    const csp = String(reply.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'self'");
    expect(reply.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(reply.headers['x-content-type-options']).toBe('nosniff');
  });
});

describe('CORS preflight', () => {
  it('allows PUT, PATCH and DELETE on a detail path, and POST on a list, for a configured origin', async () => {
    api = await startApi({ CORS_ORIGINS: 'https://app.example' });
    for (const [method, url] of [['PUT', '/api/v1/users/1/'], ['PATCH', '/api/v1/users/1/'], ['DELETE', '/api/v1/articles/1/'], ['POST', '/api/v1/articles/']]) {
      const reply = await api.request('OPTIONS', url!, {
        headers: { origin: 'https://app.example', 'access-control-request-method': method!, 'access-control-request-headers': 'authorization,content-type,if-match' },
      });
      expect(reply.status).toBe(204);
      expect(reply.headers['access-control-allow-origin']).toBe('https://app.example');
      expect(String(reply.headers['access-control-allow-methods']).split(',').map((name) => name.trim())).toContain(method);
    }
  });
});

describe('CORS_ORIGINS with *', () => {
  const preflight = (origin: string) => ({
    headers: { origin, 'access-control-request-method': 'DELETE', 'access-control-request-headers': 'authorization' },
  });

  it('lets any origin read the API without credentials: never * beside Allow-Credentials, which browsers refuse', async () => {
    api = await startApi({ CORS_ORIGINS: '*' });
    const read = await api.request('GET', '/api/v1/', { headers: { origin: 'https://anywhere.example' } });
    expect(read.headers['access-control-allow-origin']).toBe('*');
    expect(read.headers['access-control-allow-credentials']).toBeUndefined();
    const allowed = await api.request('OPTIONS', '/api/v1/articles/1/', preflight('https://anywhere.example'));
    expect(allowed.status).toBe(204);
    expect(allowed.headers['access-control-allow-origin']).toBe('*');
    expect(allowed.headers['access-control-allow-credentials']).toBeUndefined();
    expect(String(allowed.headers['access-control-allow-methods'])).toContain('DELETE');
  });

  it('beside listed origins, echoes those with credentials and answers * without them to the rest', async () => {
    api = await startApi({ CORS_ORIGINS: 'https://app.example, *' });
    const listed = await api.request('GET', '/api/v1/', { headers: { origin: 'https://app.example' } });
    expect(listed.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(listed.headers['access-control-allow-credentials']).toBe('true');
    expect(String(listed.headers.vary)).toMatch(/Origin/i);
    const other = await api.request('OPTIONS', '/api/v1/articles/', preflight('https://elsewhere.example'));
    expect(other.status).toBe(204);
    expect(other.headers['access-control-allow-origin']).toBe('*');
    expect(other.headers['access-control-allow-credentials']).toBeUndefined();
    expect(String(other.headers.vary)).toMatch(/Origin/i);
  });

  it('still sends credentials to the origins listed without *, and nothing to the others', async () => {
    api = await startApi({ CORS_ORIGINS: 'https://app.example' });
    const listed = await api.request('GET', '/api/v1/', { headers: { origin: 'https://app.example' } });
    expect(listed.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(listed.headers['access-control-allow-credentials']).toBe('true');
    const other = await api.request('GET', '/api/v1/', { headers: { origin: 'https://elsewhere.example' } });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });
});
