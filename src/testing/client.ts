/**
 * The test client, as DRF's APIClient: requests through the app's whole pipeline, in-process
 * (Fastify's inject: no port, no socket), answered as TestResponses. A client is immutable: `as`,
 * `withToken` and `login` each answer a new client, and the one they were made from is unchanged.
 */
import type { FastifyInstance } from '../framework/index.js';
import { readLiveEvents, type LiveEvents } from './live-events.js';
import { expectStatus, testResponse, type TestResponse } from './responses.js';

export type QueryValue = string | number | boolean;
export interface RequestOptions {
  readonly headers?: Readonly<Record<string, string>>;
  /** Added to the path's query string; a list repeats the parameter (`?tag=a&tag=b`). */
  readonly query?: Readonly<Record<string, QueryValue | readonly QueryValue[]>>;
}

/** Who a client's requests are made by: nobody, a user forced (`as`), or the credentials they carry. */
interface Identity {
  /** The user id every request is forced to (AppContext.forcedUser). */
  readonly forced?: number;
  /** Headers every request carries (a credential, a CSRF token). */
  readonly headers: Readonly<Record<string, string>>;
  /** Cookies every request carries (a session's), as `name=value` exactly as the server set them. */
  readonly cookies: readonly string[];
}

/** What a client needs of its test app. */
export interface ClientContext {
  readonly server: FastifyInstance;
  /** Runs `send` with its requests forced to be made by `userId` (none: as they are). */
  asUser<T>(userId: number | undefined, send: () => PromiseLike<T>): Promise<T>;
  /** Told of each stream opened, for the test app to close with itself. */
  opened(events: LiveEvents): void;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

/** The path with `query` appended to whatever query string it has. */
export function withQuery(path: string, query: RequestOptions['query']): string {
  if (!query) return path;
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const one of Array.isArray(value) ? value : [value]) search.append(name, String(one));
  }
  const text = search.toString();
  if (!text) return path;
  return `${path}${path.includes('?') ? '&' : '?'}${text}`;
}

/**
 * A body as sent: a FormData as multipart/form-data (its files as file parts, as a browser sends
 * them); an object or array as JSON; a string or bytes as they are.
 */
async function encoded(body: unknown, headers: Record<string, string>): Promise<string | Buffer | undefined> {
  if (body === undefined) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return body;
  if (body instanceof FormData) {
    // The platform's own encoder writes the parts and names the boundary.
    const multipart = new Response(body);
    headers['content-type'] = multipart.headers.get('content-type')!;
    return Buffer.from(await multipart.arrayBuffer());
  }
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  return JSON.stringify(body);
}

export interface UserLike {
  readonly id: number;
}

export class TestClient {
  readonly #context: ClientContext;
  readonly #identity: Identity;

  constructor(context: ClientContext, identity: Identity = { headers: {}, cookies: [] }) {
    this.#context = context;
    this.#identity = identity;
  }

  /**
   * Every request made by `user`, whatever credentials it carries, as DRF's force_authenticate:
   * for testing permissions and scopes without logging in. It works only in-process, through the
   * app testApp built: no header or cookie says it, so a served app cannot be made to.
   */
  as(user: UserLike): TestClient {
    return new TestClient(this.#context, { ...this.#identity, forced: user.id });
  }

  /** Every request carrying `Authorization: <keyword> <token>` (an API token, a JWT, a session id). */
  withToken(token: string, keyword = 'Bearer'): TestClient {
    return new TestClient(this.#context, { ...this.#identity, headers: { ...this.#identity.headers, authorization: `${keyword} ${token}` } });
  }

  /**
   * Logs in through the app's session endpoint (`<prefix>/auth/login/`), answering a client whose
   * requests carry the session cookie, and on unsafe methods its CSRF token, as a browser's script
   * would. Throws, naming the answer, when the login is refused.
   */
  async login(username: string, password: string): Promise<TestClient> {
    const prefix = this.#context.server.restfoldStyle?.prefixes[0] ?? '/api/v1';
    const answer = expectStatus(await this.post(`${prefix}/auth/login/`, { username, password }), 200);
    const cookies = ([answer.headers['set-cookie']].flat().filter(Boolean) as string[]).map((line) => line.split(';')[0]!);
    return new TestClient(this.#context, {
      ...this.#identity,
      cookies: [...this.#identity.cookies, ...cookies],
      headers: { ...this.#identity.headers, 'x-csrf-token': String(answer.json.csrf_token) },
    });
  }

  get = (path: string, body?: unknown, options?: RequestOptions) => this.request('GET', path, body, options);
  post = (path: string, body?: unknown, options?: RequestOptions) => this.request('POST', path, body, options);
  put = (path: string, body?: unknown, options?: RequestOptions) => this.request('PUT', path, body, options);
  patch = (path: string, body?: unknown, options?: RequestOptions) => this.request('PATCH', path, body, options);
  delete = (path: string, body?: unknown, options?: RequestOptions) => this.request('DELETE', path, body, options);
  head = (path: string, body?: unknown, options?: RequestOptions) => this.request('HEAD', path, body, options);
  options = (path: string, body?: unknown, options?: RequestOptions) => this.request('OPTIONS', path, body, options);

  /** The client's headers, the request's over them, and its cookies before any the request sends. */
  #headers(options: RequestOptions): Record<string, string> {
    const headers: Record<string, string> = { ...this.#identity.headers, ...options.headers };
    const given = Object.keys(headers).find((name) => name.toLowerCase() === 'cookie');
    const cookies = [...this.#identity.cookies, ...(given && headers[given] ? [headers[given]] : [])];
    if (given) delete headers[given];
    if (cookies.length > 0) headers.cookie = cookies.join('; ');
    return headers;
  }

  /** Any method; the helpers above are this. */
  async request(method: Method, path: string, body?: unknown, options: RequestOptions = {}): Promise<TestResponse> {
    const url = withQuery(path, options.query);
    const headers = this.#headers(options);
    const payload = await encoded(body, headers);
    const response = await this.#context.asUser(this.#identity.forced, () => this.#context.server.inject({ method, url, headers, ...(payload !== undefined && { payload }) }));
    return testResponse(method, url, response.statusCode, response.headers, response.rawPayload);
  }

  /**
   * Opens a live collection's stream (`/api/v1/items/events/`) as this client, collecting its
   * events; a refused one answers its status and body. Close it, or the test app's close will.
   */
  async liveEvents(path: string, options: RequestOptions = {}): Promise<LiveEvents> {
    const url = withQuery(path, options.query);
    const response = await this.#context.asUser(this.#identity.forced, () =>
      this.#context.server.inject({
        method: 'GET',
        url,
        headers: { accept: 'text/event-stream', ...this.#headers(options) },
        payloadAsStream: true,
      }),
    );
    const events = await readLiveEvents(url, response.statusCode, response.headers, response.stream(), () => response.raw.res.destroy());
    this.#context.opened(events);
    return events;
  }
}
