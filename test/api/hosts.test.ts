/**
 * The Host a request names, over a real socket (inject would normalise it):
 * a malformed or foreign host is 400 before any work, so nothing is stored,
 * and absolute links are built only from a host that passed the check.
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { listeningApis, type TestUser } from '../support/api.js';

const { listening, served } = listeningApis();

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `head` (a request line and header lines) and `body` on a fresh connection; reads the response to its close. */
function send(port: number, head: string[], body?: string): Promise<RawResponse> {
  const lines = [...head, 'Connection: close'];
  if (body !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (data) => (received += data.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [top = '', ...rest] = received.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = top.split('\r\n');
      const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    // Not end(): a client's half-close aborts its request in Node. `Connection: close` ends the exchange.
    socket.write(`${lines.join('\r\n')}\r\n\r\n${body ?? ''}`);
  });
}

const get = (port: number, path: string, headers: string[], version = '1.1') => send(port, [`GET ${path} HTTP/${version}`, ...headers]);
const createArticle = (port: number, user: TestUser, headers: string[]) =>
  send(port, ['POST /api/v1/articles/ HTTP/1.1', `Authorization: Bearer ${user.token}`, ...headers], JSON.stringify({ title: 'kept?', body: 'b' }));
const articleCount = async () => (await served().database.db.selectFrom('articles').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n;

function expectInvalidHost(response: RawResponse, field = 'host'): void {
  expect(response.status).toBe(400);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(JSON.parse(response.body)).toMatchObject({ code: 'validation_failed', details: { [field]: [expect.any(String)] } });
}

describe('a malformed Host', () => {
  it.each([['a b'], ['['], ['[::1'], ['example.com:70000'], ['example.com:0'], ['example.com:'], ['exa/mple.com'], ['a'.repeat(300)]])(
    'answers 400 validation_failed to Host: %s, in the JSON envelope under the API',
    async (host) => {
      const port = await listening();
      expectInvalidHost(await get(port, '/api/v1/', [`Host: ${host}`]));
    },
  );

  it('answers in plain text outside the API', async () => {
    const port = await listening();
    for (const path of ['/healthz', '/api/posts']) {
      const response = await get(port, path, ['Host: a b']);
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toMatch(/^text\/plain/);
    }
  });

  it('stores nothing from a create it refuses, on either surface', async () => {
    const port = await listening();
    const alice = await served().user('alice');
    expectInvalidHost(await createArticle(port, alice, ['Host: [']));
    expect(Number(await articleCount())).toBe(0);
    const post = await send(port, ['POST /api/posts HTTP/1.1', 'Host: ['], JSON.stringify({ title: 't', content: 'c' }));
    expect(post.status).toBe(400);
    const posts = await served().database.db.selectFrom('posts').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(Number(posts.n)).toBe(0);
    // The same create with a valid host is stored, and its Location names that host.
    const created = await createArticle(port, alice, ['Host: api.example.com:8443']);
    expect(created.status).toBe(201);
    expect(created.headers.location).toMatch(/^http:\/\/api\.example\.com:8443\/api\/v1\/articles\/\d+\/$/);
  });

  it('accepts IP addresses, IPv6 literals and a trailing dot', async () => {
    const port = await listening();
    for (const host of ['127.0.0.1:8000', '[::1]:8000', 'localhost.', 'my_service']) {
      expect((await get(port, '/healthz', [`Host: ${host}`])).status).toBe(200);
    }
  });
});

describe('absolute links', () => {
  it('name the host as a URL does: lower-cased, without the default port, an IPv6 literal compressed', async () => {
    const port = await listening({ API_REQUIRE_AUTH: 'false' });
    const alice = await served().user('alice');
    const created = await createArticle(port, alice, ['Host: API.Example.COM:80']);
    expect(created.status).toBe(201);
    const id = JSON.parse(created.body).id as number;
    expect(created.headers.location).toBe(`http://api.example.com/api/v1/articles/${id}/`);
    for (const [host, origin] of [['[0:0::1]:80', 'http://[::1]'], ['Example.ORG:8080', 'http://example.org:8080'], ['API.Example.COM:80', 'http://api.example.com']]) {
      const root = await get(port, '/api/v1/', [`Host: ${host}`]);
      expect(root.status).toBe(200);
      expect(JSON.parse(root.body).users).toBe(`${origin}/api/v1/users/`);
    }
  });
});

describe('a request without a host', () => {
  it('serves HTTP/1.0 without Host, with links on the address the server was reached at', async () => {
    const port = await listening({ API_REQUIRE_AUTH: 'false' });
    const alice = await served().user('alice');
    const response = await get(port, '/api/v1/', [], '1.0');
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body).users).toBe(`http://127.0.0.1:${port}/api/v1/users/`);
    const created = await send(port, ['POST /api/v1/articles/ HTTP/1.0', `Authorization: Bearer ${alice.token}`], JSON.stringify({ title: 't' }));
    expect(created.status).toBe(201);
    expect(created.headers.location).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/api/v1/articles/\\d+/$`));
  });

  it('treats an empty Host as none', async () => {
    const port = await listening({ API_REQUIRE_AUTH: 'false' });
    const response = await get(port, '/api/v1/', ['Host:']);
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body).users).toBe(`http://127.0.0.1:${port}/api/v1/users/`);
  });
});

describe('ALLOWED_HOSTS', () => {
  it('answers 400 to a host it does not list, and serves the names and domains it does', async () => {
    const port = await listening({ ALLOWED_HOSTS: 'api.example.com, .example.org', API_REQUIRE_AUTH: 'false' });
    const alice = await served().user('alice');
    for (const host of ['evil.example.net', 'example.com', 'api.example.com.evil.net', '127.0.0.1']) {
      expectInvalidHost(await get(port, '/api/v1/', [`Host: ${host}`]));
    }
    expectInvalidHost(await createArticle(port, alice, ['Host: evil.example.net']));
    expect(Number(await articleCount())).toBe(0);
    for (const host of ['api.example.com', 'API.Example.com:8443', 'example.org', 'www.example.org']) {
      expect((await get(port, '/api/v1/', [`Host: ${host}`])).status).toBe(200);
    }
  });

  it('lets health probes name the machine by address, but not by a malformed host', async () => {
    const port = await listening({ ALLOWED_HOSTS: 'api.example.com' });
    expect((await get(port, '/healthz', ['Host: 10.1.2.3:8000'])).status).toBe(200);
    expect((await get(port, '/readyz', ['Host: 10.1.2.3:8000'])).status).toBe(200);
    expect((await get(port, '/healthz', ['Host: a b'])).status).toBe(400);
  });
});

describe('X-Forwarded-Host and X-Forwarded-Proto from a trusted proxy', () => {
  it('checks the forwarded host like Host, and builds links from it when valid', async () => {
    const port = await listening({ TRUST_PROXY: '1', ALLOWED_HOSTS: 'api.example.com', API_REQUIRE_AUTH: 'false' });
    for (const forwarded of ['a b', '[', 'api.example.com:99999', 'evil.example.net']) {
      expectInvalidHost(await get(port, '/api/v1/', ['Host: api.example.com', `X-Forwarded-Host: ${forwarded}`]));
    }
    const good = await get(port, '/api/v1/', ['Host: internal:8000', 'X-Forwarded-Host: api.example.com', 'X-Forwarded-Proto: https']);
    expect(good.status).toBe(200);
    expect(JSON.parse(good.body).users).toBe('https://api.example.com/api/v1/users/');
  });

  it('answers 400 to an X-Forwarded-Proto other than http or https', async () => {
    const port = await listening({ TRUST_PROXY: '1' });
    for (const proto of ['ftp', 'javascript', 'https:', 'HTTPS x']) {
      expectInvalidHost(await get(port, '/api/v1/', ['Host: api.example.com', `X-Forwarded-Proto: ${proto}`]), 'x-forwarded-proto');
    }
  });

  it('ignores both headers without TRUST_PROXY', async () => {
    const port = await listening({ API_REQUIRE_AUTH: 'false' });
    const response = await get(port, '/api/v1/', ['Host: api.example.com', 'X-Forwarded-Host: a b', 'X-Forwarded-Proto: ftp']);
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body).users).toBe('http://api.example.com/api/v1/users/');
  });
});
