/**
 * Helpers for the RealWorld (Conduit) suite: the example app served as a user serves it, a caller
 * speaking Conduit's dialect (`/api` paths, `Authorization: Token …`), and the response shapes of
 * the spec's `api/openapi.yml` (gothinkster/realworld, version 1.1.0) as exact assertions.
 *
 * Each `expect…` helper checks one schema of the spec key for key (no key missing, none extra) and
 * returns the checked value typed, so a test reads the fields it then asserts on.
 *
 * Where the spec is silent or torn, the suite decides as follows (RealWorld's Postman collection
 * and the spec's own pages, under apps/documentation/…/specifications/backend, settle what they can):
 * - Statuses are the spec's 1.1.0 ones: 201 for register and create article, 200 for create comment
 *   (the spec says 200 there), 204 with no body for both DELETEs (1.0 said 200), 200 elsewhere.
 * - A wrong password or unknown email at login is 401 (the spec's Unauthorized); a missing field is
 *   422. Every 422 is exactly `{"errors": {"body": [...]}}` (GenericErrorModel), its messages naming
 *   the field at fault; bodies that are not JSON or lack the `user`/`article`/`comment` wrapper, and
 *   `limit`/`offset` outside the spec's minimums (1 and 0), are 422 too.
 * - 401 for a missing credential where one is required, and for a bad one anywhere (also where auth is
 *   optional, as DRF authenticates before it checks permissions); 403 for another user's article or
 *   comment, the article's author included for comments; 404 for an unknown username, slug, comment,
 *   or a comment under another article. Those bodies are not asserted: the spec gives them no schema.
 * - `bio` and `image` are null until set (the spec's example user has `"image": null`).
 * - tagList comes back sorted (see `tagOrder`); article lists carry no `body` (spec 1.1.0 and its
 *   "Multiple Articles" page); lists are newest first; limit defaults to 20.
 * - The slug is the title, lower-cased and hyphenated, and follows a title change (the spec's
 *   endpoints page: "The slug also gets updated when the title is changed"); a second article with a
 *   taken title gets another slug starting with the same words.
 * - Following and favouriting are idempotent: twice is once; undoing what was not done is a 200 too.
 * - Comments come in no asserted order (the spec names none); tags in GET /tags likewise.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startServer, type SpawnedServer } from '../support/spawned-server.js';

/** `npx restfold serve --app examples/realworld/app.ts`, the way the example's README will say to start it. */
const APP = ['--app', 'examples/realworld/app.ts'];

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed body when it was JSON, else undefined. */
  readonly json: unknown;
}

export interface CallOptions {
  /** The caller's token, sent as `Authorization: Token <token>` (the spec's security scheme). */
  readonly token?: string;
  /** An `Authorization` header sent verbatim, for malformed or foreign credentials. */
  readonly authorization?: string;
  /** A value sent as JSON, or a string sent as it is (for bodies that are not valid JSON). */
  readonly body?: unknown;
}

export type Call = (method: string, path: string, options?: CallOptions) => Promise<Reply>;

/**
 * The example app on a database of its own for the calling test file: a fresh SQLite file, or a fresh
 * PostgreSQL schema under TEST_DATABASE_URL when RESTFOLD_TEST_DB=postgres. `serve` migrates it first.
 * Throttling is off: the suite sends more anonymous requests, and registers and logs in more often,
 * a minute than the default rates (THROTTLE_SIGNUP counts each registration, THROTTLE_LOGIN each login) allow.
 */
/** The Conduit app served for the calling test file: a caller, and the server's own URL (for what a caller cannot read, a stream). */
export function useConduit(): Call & { readonly url: () => string } {
  let server: SpawnedServer | undefined;
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    const env: Record<string, string> = { THROTTLE_ANON: 'off', THROTTLE_USER: 'off', THROTTLE_LOGIN: 'off', THROTTLE_SIGNUP: 'off' };
    if (process.env.RESTFOLD_TEST_DB === 'postgres') {
      database = await createTestDatabase();
      env.DATABASE_URL = database.url;
    }
    server = await startServer({ appArgs: APP, env });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await database?.drop();
  });
  const call: Call = async (method, path, options = {}) => {
    if (!server) throw new Error('the Conduit app is not running');
    const { token, authorization = token === undefined ? undefined : `Token ${token}`, body } = options;
    const response = await fetch(`${server.url}/api${path}`, {
      method,
      headers: {
        ...(authorization !== undefined && { authorization }),
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    const json = response.headers.get('content-type')?.startsWith('application/json') && text ? JSON.parse(text) : undefined;
    return { status: response.status, headers: response.headers, text, json };
  };
  return Object.assign(call, { url: () => server!.url });
}

// ---- the spec's schemas -------------------------------------------------------------------------

/** `User` as the spec returns it: never the password. `bio` and `image` are null until set (the spec's examples show `"image": null`). */
export interface User {
  email: string;
  token: string;
  username: string;
  bio: string | null;
  image: string | null;
}

export interface Profile {
  username: string;
  bio: string | null;
  image: string | null;
  following: boolean;
}

/** An article in a list (`MultipleArticlesResponse`): the spec's list items carry no `body`. */
export interface ListedArticle {
  slug: string;
  title: string;
  description: string;
  tagList: string[];
  createdAt: string;
  updatedAt: string;
  favorited: boolean;
  favoritesCount: number;
  author: Profile;
}

export interface Article extends ListedArticle {
  body: string;
}

export interface Comment {
  id: number;
  createdAt: string;
  updatedAt: string;
  body: string;
  author: Profile;
}

/**
 * `date-time`, as RealWorld's own API tests check it: ISO 8601 with fractional seconds and a zone.
 * (Their Postman collection tests every `createdAt`/`updatedAt` against this form.)
 */
const ISO_TIMESTAMP = /^\d{4}-[01]\d-[0-3]\dT[0-2]\d:[0-5]\d:[0-5]\d\.\d+(?:Z|[+-][0-2]\d:[0-5]\d)$/;

const timestamp = () => expect.stringMatching(ISO_TIMESTAMP);
const optionalText = () => expect.toBeOneOf([expect.any(String), null]);
const integer = () => expect.toSatisfy((value: unknown) => Number.isInteger(value), 'an integer');
const strings = (atLeast = 0) =>
  expect.toSatisfy((value: unknown) => Array.isArray(value) && value.length >= atLeast && value.every((item) => typeof item === 'string'), `an array of at least ${atLeast} strings`);

const profileShape = () => ({ username: expect.any(String), bio: optionalText(), image: optionalText(), following: expect.any(Boolean) });

const listedArticleShape = () => ({
  slug: expect.any(String),
  title: expect.any(String),
  description: expect.any(String),
  tagList: strings(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
  favorited: expect.any(Boolean),
  favoritesCount: integer(),
  author: profileShape(),
});

const commentShape = () => ({ id: integer(), createdAt: timestamp(), updatedAt: timestamp(), body: expect.any(String), author: profileShape() });

/** Checks `reply` is `status` with a JSON body of exactly `shape`, and returns the body. */
function expectJson<T>(reply: Reply, status: number, shape: unknown): T {
  expect({ status: reply.status, body: reply.json ?? reply.text }).toMatchObject({ status });
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  expect(reply.json).toStrictEqual(shape);
  return reply.json as T;
}

/** `UserResponse`: `{"user": User}`. */
export function expectUser(reply: Reply, status = 200): User {
  return expectJson<{ user: User }>(reply, status, {
    user: { email: expect.any(String), token: expect.any(String), username: expect.any(String), bio: optionalText(), image: optionalText() },
  }).user;
}

/** `ProfileResponse`: `{"profile": Profile}`. */
export function expectProfile(reply: Reply): Profile {
  return expectJson<{ profile: Profile }>(reply, 200, { profile: profileShape() }).profile;
}

/** `SingleArticleResponse`: `{"article": Article}`, with its `body`. */
export function expectArticle(reply: Reply, status = 200): Article {
  return expectJson<{ article: Article }>(reply, status, { article: { ...listedArticleShape(), body: expect.any(String) } }).article;
}

/** `MultipleArticlesResponse`: `{"articles": [...], "articlesCount": n}`, `articlesCount` counting every match, not the page. */
export function expectArticles(reply: Reply): { articles: ListedArticle[]; articlesCount: number } {
  const page = expectJson<{ articles: ListedArticle[]; articlesCount: number }>(reply, 200, {
    articles: expect.any(Array),
    articlesCount: integer(),
  });
  for (const article of page.articles) expect(article).toStrictEqual(listedArticleShape());
  return page;
}

/** `SingleCommentResponse`: `{"comment": Comment}`. */
export function expectComment(reply: Reply, status = 200): Comment {
  return expectJson<{ comment: Comment }>(reply, status, { comment: commentShape() }).comment;
}

/** `MultipleCommentsResponse`: `{"comments": [...]}`. */
export function expectComments(reply: Reply): Comment[] {
  const { comments } = expectJson<{ comments: Comment[] }>(reply, 200, { comments: expect.any(Array) });
  for (const comment of comments) expect(comment).toStrictEqual(commentShape());
  return comments;
}

/** `TagsResponse`: `{"tags": [...]}`. */
export function expectTags(reply: Reply): string[] {
  return expectJson<{ tags: string[] }>(reply, 200, { tags: strings() }).tags;
}

/**
 * `GenericErrorModel` with the spec's validation status: 422 `{"errors": {"body": ["…"]}}`, at least
 * one message, the messages together naming `mentions` (the field at fault) so a client can show why.
 */
export function expectErrors(reply: Reply, mentions?: RegExp): string[] {
  const { errors } = expectJson<{ errors: { body: string[] } }>(reply, 422, {
    errors: { body: strings(1) },
  });
  if (mentions) expect(errors.body.join(' ')).toMatch(mentions);
  return errors.body;
}

/**
 * A status whose body the spec leaves open (401 `Unauthorized` has `content: {}`; 403 and 404 come
 * from the spec's error-handling page, without a schema). The body is shown when the status differs.
 */
export function expectStatus(reply: Reply, status: number): void {
  expect({ status: reply.status, body: reply.json ?? reply.text }).toMatchObject({ status });
}

// ---- fixtures -----------------------------------------------------------------------------------

export interface Account {
  readonly username: string;
  readonly email: string;
  readonly password: string;
  readonly token: string;
}

/** Registers `username` (201, `UserResponse`) and returns its credentials and token. */
export async function register(call: Call, username: string): Promise<Account> {
  const account = { username, email: `${username}@example.com`, password: `${username}-secret-1` };
  const user = expectUser(await call('POST', '/users', { body: { user: account } }), 201);
  return { ...account, token: user.token };
}

export interface NewArticle {
  title: string;
  description?: string;
  body?: string;
  tagList?: string[];
}

/** Creates an article as `author` (201, `SingleArticleResponse`), filling description and body. */
export async function createArticle(call: Call, author: Account, article: NewArticle): Promise<Article> {
  const body = { description: `about ${article.title}`, body: `all of ${article.title}`, ...article };
  return expectArticle(await call('POST', '/articles', { token: author.token, body: { article: body } }), 201);
}

/**
 * How the app orders `tagList`. The spec is silent; RealWorld's Postman collection ("Articles by Tag")
 * creates `["training", "dragons"]` and expects `"dragons"` first, and the spec's documented examples
 * all show sorted lists: tags come back sorted alphabetically, whatever order they were given in.
 */
export function tagOrder(given: readonly string[]): string[] {
  return [...given].sort();
}

/** The slugs of a page of articles, in the order served. */
export const slugs = (page: { articles: readonly ListedArticle[] }): string[] => page.articles.map((article) => article.slug);
