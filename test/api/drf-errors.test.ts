/**
 * The ready exception handler for Django REST Framework's error bodies (docs/api-style.md): what
 * a DRF client reads. Validation is the fields' messages at the top level (`non_field_errors` for
 * the rest, a list per record for a bulk create), every other error `{"detail": "..."}`, all sent
 * as `application/json` exactly, as react-admin's DRF auth providers compare the header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, drfExceptionHandler, fields, hasPermission, isAuthenticated, model, serializer } from '../../src/framework/index.js';
import { PASSWORD, startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Span = model('spans', { id: fields.id(), title: fields.string({ maxLength: 20 }), starts: fields.integer(), ends: fields.integer() });

const app = withGeneratedMigrations(
  defineApp({
    exceptionHandler: drfExceptionHandler,
    collections: [
      collection('spans', {
        serializer: serializer(Span, {
          fields: ['id', 'title', 'starts', 'ends'],
          validate: (values) => {
            if ((values.starts as number) > (values.ends as number)) return { non_field_errors: ['A span must not end before it starts.'] };
          },
        }),
        permissions: { list: [isAuthenticated], retrieve: [isAuthenticated], create: [isAuthenticated], update: [isAuthenticated], partial_update: [isAuthenticated], destroy: [hasPermission('spans.delete')] },
        bulkCreate: { max: 5 },
      }),
    ],
  }),
);

let api: TestApi;
let alice: TestUser;

beforeAll(async () => {
  api = await startApi({ THROTTLE_USER: '10/min' }, app);
  alice = await api.user('alice');
});
afterAll(() => api.close());

/** The reply as a DRF client sees it: its status and JSON body, sent as `application/json` with no parameter. */
function asDrf(reply: Reply): { status: number; body: unknown } {
  expect(reply.headers['content-type']).toBe('application/json');
  return { status: reply.status, body: reply.json };
}

const spans = (method: string, url: string, body?: unknown) => api.request(method, url, { token: alice.token, body });

describe('drfExceptionHandler', () => {
  it('answers a validation failure with each field’s messages at the top level', async () => {
    expect(asDrf(await spans('POST', '/api/v1/spans/', { title: 'x'.repeat(21), starts: 1 }))).toEqual({
      status: 400,
      body: { title: ['Ensure this field has no more than 20 characters.'], ends: ['This field is required.'] },
    });
  });

  it('answers an object validator’s finding under non_field_errors', async () => {
    expect(asDrf(await spans('POST', '/api/v1/spans/', { title: 'late', starts: 5, ends: 2 }))).toEqual({
      status: 400,
      body: { non_field_errors: ['A span must not end before it starts.'] },
    });
  });

  it('answers a bulk create’s failures as a list of per-record errors, as DRF’s ListSerializer does', async () => {
    const reply = await spans('POST', '/api/v1/spans/bulk/', [{ title: 'fine', starts: 1, ends: 2 }, { title: 'no end', starts: 1 }, { title: 'fine too', starts: 1, ends: 2 }, { title: 'back', starts: 3, ends: 1 }]);
    expect(asDrf(reply)).toEqual({
      status: 400,
      body: [{}, { ends: ['This field is required.'] }, {}, { non_field_errors: ['A span must not end before it starts.'] }],
    });
  });

  it('answers a parse failure with its detail', async () => {
    const reply = await api.request('POST', '/api/v1/spans/', { token: alice.token, body: '{"title": ', headers: { 'content-type': 'application/json' } });
    const { status, body } = asDrf(reply);
    expect(status).toBe(400);
    expect(Object.keys(body as object)).toEqual(['detail']);
    expect((body as { detail: string }).detail).toMatch(/JSON/);
  });

  it('answers 400 with non_field_errors when a login’s credentials are wrong', async () => {
    for (const url of ['/api/v1/auth/token/', '/api/v1/auth/login/', '/api/v1/auth/jwt/']) {
      const reply = await api.request('POST', url, { body: { username: 'alice', password: `not-${PASSWORD}` } });
      expect(asDrf(reply), url).toEqual({ status: 400, body: { non_field_errors: ['Unable to log in with the provided credentials.'] } });
    }
  });

  it('answers 401 with its detail, keeping WWW-Authenticate', async () => {
    const missing = await api.request('GET', '/api/v1/spans/');
    expect(asDrf(missing)).toEqual({ status: 401, body: { detail: 'Authentication credentials were not provided.' } });
    expect(missing.headers['www-authenticate']).toBe('Bearer');
    const bad = await api.request('GET', '/api/v1/spans/', { token: 'not-a-token' });
    expect(asDrf(bad).status).toBe(401);
    expect(Object.keys(bad.json)).toEqual(['detail']);
  });

  it('answers 403, 404 and 405 with their details', async () => {
    const { id } = (await spans('POST', '/api/v1/spans/', { title: 'kept', starts: 1, ends: 2 })).json;
    expect(asDrf(await spans('DELETE', `/api/v1/spans/${id}/`))).toEqual({ status: 403, body: { detail: 'You do not have permission to perform this action.' } });
    expect(asDrf(await spans('GET', '/api/v1/spans/999999/'))).toEqual({ status: 404, body: { detail: 'Not found.' } });
    // DRF takes an id that cannot be one for a missing record.
    expect(asDrf(await spans('GET', '/api/v1/spans/first/'))).toEqual({ status: 404, body: { detail: 'Not found.' } });
    expect(asDrf(await api.request('GET', '/api/v1/nothing-here/'))).toEqual({ status: 404, body: { detail: 'Not found.' } });
    const refused = await spans('PATCH', '/api/v1/spans/');
    expect(asDrf(refused)).toEqual({ status: 405, body: { detail: 'Method "PATCH" not allowed.' } });
    expect(refused.headers.allow).toContain('GET');
  });

  it('answers 429 with its detail and Retry-After', async () => {
    const bo = await api.user('bo');
    let reply: Reply | undefined;
    for (let attempt = 0; attempt <= 10 && reply?.status !== 429; attempt++) reply = await api.request('GET', '/api/v1/spans/', { token: bo.token });
    const { status, body } = asDrf(reply!);
    expect(status).toBe(429);
    expect((body as { detail: string }).detail).toMatch(/^Request was throttled\. Expected available in \d+ seconds?\.$/);
    expect(Number(reply!.headers['retry-after'])).toBeGreaterThan(0);
  });
});
