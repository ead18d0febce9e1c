/**
 * What the baseline answers, whatever serves it: the SQL a good implementation needs (token lookup,
 * count, page; one INSERT or UPDATE … RETURNING per write, one INSERT of many rows per bulk create) over the bare driver (pg with named
 * prepared statements, unnamed with DB_PREPARED_STATEMENTS=false, or better-sqlite3 with prepared statements), the minimal checks Restfold makes
 * on those requests, and the same statuses and bodies. server.mjs serves it over node:http (the
 * ceiling), fastify.mjs over Fastify (the floor a Fastify-based framework starts from).
 */
import { createHash } from 'node:crypto';
import SQLite from 'better-sqlite3';
import pg from 'pg';

export const MAX_BODY_BYTES = 1_048_576;
const PAGE_SIZE = 20;
const USER_COLUMNS = 'id, username, email, is_active, date_joined';
const ARTICLE_COLUMNS = 'id, title, body, author_id, created_at';
const SQL = {
  // As Restfold's token lookup: the token is current while it carries its user's credential version,
  // or is the one a password change kept.
  tokenUser:
    'SELECT users.id, users.is_superuser FROM auth_tokens INNER JOIN users ON users.id = auth_tokens.user_id ' +
    'WHERE auth_tokens.key_hash = $1 AND users.is_active = $2 ' +
    'AND (auth_tokens.credentials_version = users.credentials_version OR auth_tokens.key_hash = users.credentials_kept)',
  permission: 'SELECT 1 AS held FROM user_permissions WHERE user_id = $1 AND name = $2',
  activeCount: 'SELECT count(*) AS count FROM users WHERE is_active = $1',
  activePage: `SELECT ${USER_COLUMNS} FROM users WHERE is_active = $1 ORDER BY date_joined DESC, id ASC LIMIT $2 OFFSET $3`,
  user: `SELECT ${USER_COLUMNS} FROM users WHERE id = $1`,
  userExists: 'SELECT 1 AS found FROM users WHERE id = $1',
  // Only a superuser changes a superuser's record ($3: whether the requester is one); no e-mail ($1 null) changes nothing.
  changeEmail: `UPDATE users SET email = COALESCE($1, email) WHERE id = $2 AND (NOT is_superuser OR $3) RETURNING ${USER_COLUMNS}`,
  // The new article with its author, in one statement.
  createArticle:
    `WITH article AS (INSERT INTO articles (title, body, author_id, created_at) VALUES ($1, $2, $3, $4) RETURNING ${ARTICLE_COLUMNS}) ` +
    'SELECT article.*, users.username AS author_username FROM article INNER JOIN users ON users.id = article.author_id',
  // Only its author or a holder of `articles.delete` ($3) deletes an article.
  deleteArticle: 'DELETE FROM articles WHERE id = $1 AND (author_id = $2 OR $3) RETURNING id',
  articleExists: 'SELECT 1 AS found FROM articles WHERE id = $1',
  publishedPosts: 'SELECT id, title, content, published, created_at, updated_at FROM posts WHERE published = $1 ORDER BY created_at DESC, id DESC',
};
// SQLite has no INSERT in a WITH; its RETURNING may hold a subquery instead.
const SQLITE_SQL = {
  ...SQL,
  createArticle:
    `INSERT INTO articles (title, body, author_id, created_at) VALUES ($1, $2, $3, $4) ` +
    `RETURNING ${ARTICLE_COLUMNS}, (SELECT username FROM users WHERE users.id = articles.author_id) AS author_username`,
};

/** The INSERT of `count` articles with their authors, in one statement, in the order given (by id: the table's counter numbers them so). */
function createArticlesSql(count) {
  const rows = Array.from({ length: count }, (_, row) => `($${4 * row + 1}, $${4 * row + 2}, $${4 * row + 3}, $${4 * row + 4})`).join(', ');
  return {
    postgres:
      `WITH article AS (INSERT INTO articles (title, body, author_id, created_at) VALUES ${rows} RETURNING ${ARTICLE_COLUMNS}) ` +
      'SELECT article.*, users.username AS author_username FROM article INNER JOIN users ON users.id = article.author_id ORDER BY article.id',
    sqlite:
      `INSERT INTO articles (title, body, author_id, created_at) VALUES ${rows} ` +
      `RETURNING ${ARTICLE_COLUMNS}, (SELECT username FROM users WHERE users.id = articles.author_id) AS author_username`,
  };
}

/** name → (parameters, texts?) → rows, on whichever driver DATABASE_URL names; `texts` ({ postgres, sqlite }) for a statement made at run time. */
function openQueries(url) {
  if (url.startsWith('sqlite:')) {
    // The pragmas Restfold's own connection runs with, so writes are as durable on both.
    const connection = new SQLite(url.slice('sqlite:'.length));
    connection.pragma('journal_mode = WAL');
    connection.pragma('synchronous = NORMAL');
    connection.pragma('foreign_keys = ON');
    connection.pragma('busy_timeout = 5000');
    const statements = Object.fromEntries(
      Object.entries(SQLITE_SQL).map(([name, text]) => [name, connection.prepare(text.replace(/\$\d+/g, '?'))]),
    );
    return async (name, parameters, texts) => {
      statements[name] ??= connection.prepare(texts.sqlite.replace(/\$\d+/g, '?'));
      return statements[name].all(...parameters.map((value) => (typeof value === 'boolean' ? Number(value) : value)));
    };
  }
  // DB_MAX_CONNECTIONS, as Restfold reads it (bench/compare.mjs lowers it when more sides share the database).
  const pool = new pg.Pool({ connectionString: url, max: Number(process.env.DB_MAX_CONNECTIONS ?? 25), min: 5 });
  // DB_PREPARED_STATEMENTS=false, as Restfold reads it: unnamed statements, which a transaction pooler allows.
  const named = process.env.DB_PREPARED_STATEMENTS !== 'false';
  return async (name, values, texts) => (await pool.query({ ...(named && { name }), text: texts?.postgres ?? SQL[name], values })).rows;
}

const query = openQueries(process.env.DATABASE_URL ?? '');

const isoTime = (value) => new Date(value).toISOString();
const userRecord = (row) => ({
  id: Number(row.id),
  username: row.username,
  email: row.email,
  is_active: Boolean(row.is_active),
  date_joined: isoTime(row.date_joined),
  password: null,
});
const articleRecord = (row) => ({
  id: Number(row.id),
  title: row.title,
  body: row.body,
  author: { id: Number(row.author_id), username: row.author_username },
  author_id: Number(row.author_id),
  created_at: isoTime(row.created_at),
});
const postRecord = (row) => ({
  id: Number(row.id),
  title: row.title,
  content: row.content,
  published: Boolean(row.published),
  created_at: isoTime(row.created_at),
  updated_at: isoTime(row.updated_at),
});

/** An answer: its status, body (to be written as JSON; undefined: none) and headers beyond the content type. */
const answered = (status, body, headers = {}) => ({ status, body, headers });

/** An error in Restfold's shape: `{error, code, details?}`. */
export const fail = (status, code, error, details) => answered(status, details ? { error, code, details } : { error, code });
const invalid = (details) => fail(400, 'validation_failed', 'Invalid input.', details);
const notFound = () => fail(404, 'not_found', 'Not found.');
const forbidden = () => fail(403, 'permission_denied', 'You do not have permission to perform this action.');

/** The token's user ({ id, isSuperuser }), or undefined. */
async function authenticated(authorization) {
  const match = /^Bearer (rf_[A-Za-z0-9_-]{43})$/.exec(authorization ?? '');
  if (!match) return undefined;
  const [row] = await query('tokenUser', [createHash('sha256').update(match[1]).digest('hex'), true]);
  return row && { id: Number(row.id), isSuperuser: Boolean(row.is_superuser) };
}

/** Superusers hold every permission; others are asked only when it matters. */
const holds = async (user, name) => user.isSuperuser || (await query('permission', [user.id, name])).length > 0;

/** A string field's error, or undefined: a string without NUL (PostgreSQL text cannot hold one) within `maxLength`. */
function stringError(value, { maxLength, blank }) {
  if (typeof value !== 'string') return 'Not a valid string.';
  if (value.includes('\u0000')) return 'Null characters are not allowed.';
  if (value === '' && !blank) return 'This field may not be blank.';
  if (value.length > maxLength && [...value].length > maxLength) return `Ensure this field has no more than ${maxLength} characters.`;
  return undefined;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** An article's values from a request's record, or its errors by field. */
async function articleValues(body, user) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { errors: { non_field_errors: ['Expected a JSON object.'] } };
  const { title, body: text = '', author_id: authorId = user.id } = body;
  const errors = {};
  const titleError = stringError(title, { maxLength: 200, blank: false });
  if (titleError) errors.title = [titleError];
  const textError = stringError(text, { maxLength: Infinity, blank: true });
  if (textError) errors.body = [textError];
  if (!Number.isSafeInteger(authorId)) errors.author_id = ['A valid integer is required.'];
  // Nobody files an article under another user's name, save an editor.
  else if (authorId !== user.id && !(await holds(user, 'articles.change'))) errors.author_id = ['You may only name yourself.'];
  return Object.keys(errors).length > 0 ? { errors } : { values: [title, text, authorId, new Date().toISOString()] };
}

const missingAuthor = (error) => error.code === '23503' || error.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';

async function createArticle(body, user, host) {
  const { values, errors } = await articleValues(body, user);
  if (errors) return invalid(errors);
  let row;
  try {
    [row] = await query('createArticle', values);
  } catch (error) {
    if (missingAuthor(error)) return invalid({ author_id: ['No such user.'] });
    throw error;
  }
  return answered(201, articleRecord(row), { location: `http://${host}/api/v1/articles/${row.id}/` });
}

/** A bulk create of articles (at most 100, as Restfold's): every record valid, then one INSERT of them all, with their authors. */
async function createArticles(records, user) {
  if (records.length > 100) return fail(413, 'payload_too_large', 'Send at most 100 records at once.');
  if (records.length === 0) return invalid({ non_field_errors: ['Send at least one record.'] });
  const details = {};
  const values = [];
  for (const [index, record] of records.entries()) {
    const checked = await articleValues(record, user);
    if (checked.errors) for (const [field, messages] of Object.entries(checked.errors)) details[`${index}.${field}`] = messages;
    else values.push(...checked.values);
  }
  if (Object.keys(details).length > 0) return invalid(details);
  try {
    return answered(201, (await query(`createArticles${records.length}`, values, createArticlesSql(records.length))).map(articleRecord));
  } catch (error) {
    if (missingAuthor(error)) return invalid({ non_field_errors: ['No such user.'] });
    throw error;
  }
}

/** PATCH of a user's e-mail (the one change the baseline makes): by its owner or a `users.change` holder. */
async function changeUser(body, user, id) {
  const unsupported = Object.keys(body).filter((field) => field !== 'email');
  if (unsupported.length > 0) return invalid(Object.fromEntries(unsupported.map((field) => [field, ['The baseline only changes email.']])));
  if (body.email !== undefined) {
    const emailError = stringError(body.email, { maxLength: 254, blank: true }) ?? (body.email === '' || EMAIL.test(body.email) ? undefined : 'Enter a valid email address.');
    if (emailError) return invalid({ email: [emailError] });
  }
  const allowed = id === user.id || (await holds(user, 'users.change'));
  const [row] = allowed ? await query('changeEmail', [body.email ?? null, id, user.isSuperuser]) : [];
  if (row) return answered(200, userRecord(row));
  // Nothing changed: no such user (404), or one the requester may not change (403).
  return (await query('userExists', [id])).length === 0 ? notFound() : forbidden();
}

/** DELETE of an article: by its author or a `articles.delete` holder; 204 with no body. */
async function deleteArticle(user, id) {
  const [row] = await query('deleteArticle', [id, user.id, await holds(user, 'articles.delete')]);
  if (row) return answered(204, undefined);
  return (await query('articleExists', [id])).length === 0 ? notFound() : forbidden();
}

/**
 * The answer to a request, whatever serves it: `readBody()` gives the JSON object it sent ({ body }),
 * or the error to answer instead ({ status, code, error }).
 */
export async function answer({ method, url: path, headers, readBody }) {
  const url = new URL(path, `http://${headers.host}`);
  if (url.pathname === '/api/posts') return answered(200, (await query('publishedPosts', [true])).map(postRecord));
  const user = await authenticated(headers.authorization);
  if (!user) {
    return headers.authorization
      ? fail(401, 'authentication_failed', 'Invalid token.')
      : fail(401, 'not_authenticated', 'Authentication credentials were not provided.');
  }
  const withBody = async (write) => {
    const { body, ...refused } = await readBody();
    return body ? write(body) : fail(refused.status, refused.code, refused.error);
  };
  if (url.pathname === '/api/v1/articles/' && method === 'POST') return withBody((body) => (Array.isArray(body) ? createArticles(body, user) : createArticle(body, user, headers.host)));
  if (url.pathname === '/api/v1/users/') {
    const page = Number(url.searchParams.get('page') ?? '1');
    const [{ count }] = await query('activeCount', [true]);
    const total = Number(count);
    const rows = await query('activePage', [true, PAGE_SIZE, (page - 1) * PAGE_SIZE]);
    const link = (to) => {
      const next = new URL(url);
      next.searchParams.set('page', String(to));
      return next.toString();
    };
    return answered(200, {
      count: total,
      next: page * PAGE_SIZE < total ? link(page + 1) : null,
      previous: page > 1 ? link(page - 1) : null,
      results: rows.map(userRecord),
    });
  }
  const articleId = Number(/^\/api\/v1\/articles\/(\d{1,15})\/$/.exec(url.pathname)?.[1]);
  if (articleId && method === 'DELETE') return deleteArticle(user, articleId);
  const id = Number(/^\/api\/v1\/users\/(\d{1,15})\/$/.exec(url.pathname)?.[1]);
  if (id && method === 'PATCH') return withBody((body) => changeUser(body, user, id));
  if (id) {
    const [row] = await query('user', [id]);
    return row ? answered(200, userRecord(row)) : notFound();
  }
  return notFound();
}

