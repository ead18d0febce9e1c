import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi;
let admin: TestUser;

beforeAll(async () => {
  api = await startApi({ MAX_BODY_BYTES: '200' });
  admin = await api.user('admin', { superuser: true });
});
afterAll(() => api.close());

const list = (accept: string | undefined, query = '') =>
  api.request('GET', `/api/v1/users/${query}`, { token: admin.token, headers: accept === undefined ? {} : { accept } });

const create = (body: string | Buffer, contentType?: string) =>
  api.app
    .inject({
      method: 'POST',
      url: '/api/v1/users/',
      headers: { authorization: `Bearer ${admin.token}`, ...(contentType && { 'content-type': contentType }) },
      payload: body,
    })
    .then((response) => ({ status: response.statusCode, json: response.json() as Record<string, unknown>, headers: response.headers }));

let counter = 0;
const newUser = () => JSON.stringify({ username: `u${(counter += 1)}`, password: 'pw' });

describe('negotiation: Accept', () => {
  it.each([
    ['no Accept header', undefined],
    ['an empty Accept header', ''],
    ['*/*', '*/*'],
    ['application/json', 'application/json'],
    ['application/json with a charset', 'application/json; charset=utf-8'],
    ['application/*', 'application/*'],
    ['JSON at a low but non-zero weight', 'text/csv, application/json;q=0.1'],
  ])('serves JSON for %s', async (_name, accept) => {
    const reply = await list(accept);
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(reply.json.count).toBe(1);
  });

  it.each([
    ['a type it cannot render', 'application/xml'],
    ['JSON excluded by q=0', 'application/json;q=0'],
    ['anything but JSON or HTML', '*/*, application/json;q=0, text/html;q=0'],
    ['nothing at all', '*/*;q=0'],
    ['a malformed header', 'not a media type'],
  ])('answers 406 not_acceptable, as JSON, for %s', async (_name, accept) => {
    const reply = await list(accept);
    expect(reply.status).toBe(406);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(reply.json).toEqual({ error: expect.stringContaining('application/json'), code: 'not_acceptable' });
  });

  it('serves the browsable page for text/html, and for format=html', async () => {
    for (const [accept, query] of [['text/html', ''], ['application/json', '?format=html']] as const) {
      const reply = await list(accept, query);
      expect(reply.status).toBe(200);
      expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    }
  });

  it('lets format=json override the Accept header', async () => {
    const reply = await list('application/xml', '?format=json');
    expect(reply.status).toBe(200);
    expect(reply.json.count).toBe(1);
  });

  it('answers 406 for a format it cannot serve', async () => {
    const reply = await list(undefined, '?format=xml');
    expect(reply.status).toBe(406);
    expect(reply.json).toEqual({ error: 'Unknown format "xml". Use format=json or format=html.', code: 'not_acceptable' });
  });

  it('authenticates before negotiating: no credential is 401 whatever the Accept', async () => {
    const reply = await api.request('GET', '/api/v1/users/', { headers: { accept: 'application/xml' } });
    expect(reply.status).toBe(401);
  });
});

describe('parsing: request bodies', () => {
  it('accepts application/json, with or without a UTF-8 charset', async () => {
    expect((await create(newUser(), 'application/json')).status).toBe(201);
    expect((await create(newUser(), 'application/json; charset=utf-8')).status).toBe(201);
    expect((await create(newUser(), 'Application/JSON; charset="UTF-8"')).status).toBe(201);
  });

  it("accepts an HTML form's fields, as SPEC's parsers take them", async () => {
    const form = new URLSearchParams(JSON.parse(newUser()) as Record<string, string>).toString();
    expect((await create(form, 'application/x-www-form-urlencoded')).status).toBe(201);
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['a form in another charset', 'application/x-www-form-urlencoded; charset=latin1'],
    ['JSON in another charset', 'application/json; charset=latin1'],
    ['no Content-Type', undefined],
  ])('answers 415 unsupported_media_type for %s', async (_name, contentType) => {
    const reply = await create(newUser(), contentType);
    expect(reply.status).toBe(415);
    expect(reply.json).toEqual({ error: expect.stringContaining('application/json'), code: 'unsupported_media_type' });
  });

  it("reads a multipart/form-data body's fields as a form's (DRF's MultiPartParser); a malformed one is 400 parse_error", async () => {
    const fields = JSON.parse(newUser()) as Record<string, string>;
    const multipart = (boundary: string) =>
      Buffer.from(`${Object.entries(fields).map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('')}--${boundary}--\r\n`);
    expect((await create(multipart('b0undary'), 'multipart/form-data; boundary=b0undary')).status).toBe(201);
    const malformed = await create(newUser(), 'multipart/form-data; boundary=x');
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject({ code: 'parse_error', error: expect.stringContaining('multipart') });
  });

  it('answers 400 parse_error for malformed JSON and for bytes that are not UTF-8', async () => {
    const malformed = await create('{"username": "x",', 'application/json');
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject({ code: 'parse_error', details: { non_field_errors: [expect.stringMatching(/^JSON parse error/)] } });
    const latin1 = await create(Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]), 'application/json');
    expect(latin1.status).toBe(400);
    expect(latin1.json).toMatchObject({ code: 'parse_error', error: 'The body is not valid UTF-8.' });
  });

  it('answers 400 parse_error for JSON that is not an object', async () => {
    for (const body of ['[]', '"text"', '42', 'null']) {
      const reply = await create(body, 'application/json');
      expect(reply.status).toBe(400);
      expect(reply.json.code).toBe('parse_error');
    }
  });

  it('answers 413 payload_too_large above MAX_BODY_BYTES, and takes a body of exactly that size', async () => {
    const padded = (size: number) => {
      const base = JSON.parse(newUser()) as Record<string, string>;
      const text = JSON.stringify({ ...base, email: '' });
      return text.slice(0, -1) + ' '.repeat(size - text.length) + '}';
    };
    const exact = await create(padded(200), 'application/json');
    expect(exact.status).toBe(201);
    const over = await create(padded(201), 'application/json');
    expect(over.status).toBe(413);
    expect(over.json).toEqual({ error: expect.any(String), code: 'payload_too_large' });
    // The login endpoints share the limit and the envelope.
    const login = await api.request('POST', '/api/v1/auth/token/', { body: { username: 'x'.repeat(300), password: 'y' } });
    expect(login.status).toBe(413);
    expect(login.json.code).toBe('payload_too_large');
  });
});

describe('URL length', () => {
  it('answers 414 uri_too_long for a path or a query string over 16 KiB', async () => {
    const longPath = await api.request('GET', `/api/v1/users/${'9'.repeat(17 * 1024)}/`, { token: admin.token });
    expect(longPath.status).toBe(414);
    expect(longPath.json).toEqual({ error: expect.stringContaining('longer than'), code: 'uri_too_long' });
    const longQuery = await api.request('GET', `/api/v1/users/?search=${'a'.repeat(17 * 1024)}`, { token: admin.token });
    expect(longQuery.status).toBe(414);
    expect(longQuery.json.code).toBe('uri_too_long');
    expect(longQuery.headers['x-request-id']).toBeDefined();
    // A search term is at most 200 characters, so the long query is a long ordering.
    const justUnder = await api.request('GET', `/api/v1/users/?ordering=${'id,'.repeat(5 * 1024)}id`, { token: admin.token });
    expect(justUnder.status).toBe(200);
  });

  it('answers a malformed URL with the JSON envelope, without echoing it', async () => {
    const reply = await api.request('GET', '/api/v1/users/%E0%A4%A/', { token: admin.token });
    expect(reply.status).toBe(400);
    const message = 'The URL is not valid percent-encoded UTF-8.';
    expect(reply.json).toEqual({ error: message, code: 'parse_error', details: { non_field_errors: [message] } });
  });
});
