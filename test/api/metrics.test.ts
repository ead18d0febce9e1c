import { afterEach, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../support/api.js';

let api: TestApi | undefined;
afterEach(() => api?.close());

describe('metrics', () => {
  it('are off unless METRICS=true', async () => {
    api = await startApi();
    expect((await api.request('GET', '/metrics')).status).toBe(404);
  });

  it('count requests by route pattern and status, time them, and count throttle rejections', async () => {
    api = await startApi({ METRICS: 'true', THROTTLE_USER: '2/min' });
    const user = await api.user('reader');
    for (let i = 0; i < 3; i++) await api.request('GET', `/api/v1/users/${user.id}/`, { token: user.token });
    const reply = await api.request('GET', '/metrics');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(reply.body).toContain('restfold_http_requests_total{method="GET",route="/api/v1/users/:id/",status="200"} 2');
    expect(reply.body).toContain('restfold_http_requests_total{method="GET",route="/api/v1/users/:id/",status="429"} 1');
    expect(reply.body).toContain('restfold_throttled_total{route="/api/v1/users/:id/"} 1');
    expect(reply.body).toMatch(/restfold_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/users\/:id\/",status="200"\} 2/);
    expect(reply.body).toContain('restfold_process_resident_memory_bytes');
    // The user's record read was compiled once, in this process, and kept.
    expect(Number(/restfold_compiled_statements\{event="compiled"\} (\d+)/.exec(reply.body)?.[1])).toBeGreaterThan(0);
    expect(reply.body).toMatch(/restfold_compiled_statements\{event="dropped"\} \d+/);
    if (api.database.dialect === 'postgres') expect(reply.body).toMatch(/restfold_db_pool_connections\{state="total"\} \d+/);
  });
});
