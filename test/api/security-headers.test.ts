import { afterEach, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../support/api.js';

let api: TestApi | undefined;
afterEach(() => api?.close());

const browser = { accept: 'text/html' };

describe('security headers on the browsable pages', () => {
  it('sends a same-origin CSP, no framing and no sniffing with every HTML page', async () => {
    api = await startApi();
    const user = await api.user('reader');
    for (const reply of [
      await api.request('GET', '/api/v1/users/', { token: user.token, headers: browser }),
      await api.request('GET', '/api/v1/users/', { headers: browser }),
    ]) {
      expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(reply.headers['content-security-policy']).toContain("script-src 'self'");
      expect(reply.headers['content-security-policy']).toContain("default-src 'self'");
      expect(reply.headers['x-frame-options']).toBe('SAMEORIGIN');
      expect(reply.headers['x-content-type-options']).toBe('nosniff');
    }
    const json = await api.request('GET', '/api/v1/users/', { token: user.token });
    expect(json.headers['content-security-policy']).toBeUndefined();
  });
});

describe('CORS', () => {
  const preflight = (origin: string) =>
    api!.request('OPTIONS', '/api/v1/users/', {
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });

  it('is off unless CORS_ORIGINS is set', async () => {
    api = await startApi();
    const user = await api.user('reader');
    const reply = await api.request('GET', '/api/v1/users/', { token: user.token, headers: { origin: 'https://evil.example' } });
    expect(reply.headers['access-control-allow-origin']).toBeUndefined();
    expect((await preflight('https://evil.example')).headers['access-control-allow-origin']).toBeUndefined();
  });

  it('allows exactly the configured origins', async () => {
    api = await startApi({ CORS_ORIGINS: 'https://app.example, https://admin.example' });
    const user = await api.user('reader');
    const allowed = await api.request('GET', '/api/v1/users/', { token: user.token, headers: { origin: 'https://app.example' } });
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(String(allowed.headers['access-control-expose-headers'])).toContain('ETag');
    expect((await preflight('https://admin.example')).headers['access-control-allow-origin']).toBe('https://admin.example');
    const other = await api.request('GET', '/api/v1/users/', { token: user.token, headers: { origin: 'https://evil.example' } });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });
});
