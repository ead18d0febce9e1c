#!/usr/bin/env node
/**
 * The ceiling: scenarios (a), (c) and (g) served by node:http over the bare
 * driver (pg with named prepared statements, or better-sqlite3 with prepared
 * statements), doing only the SQL a good implementation needs (token lookup,
 * count, page) and JSON.stringify. Same URLs and response bodies as Restfold.
 *   DATABASE_URL=... PORT=... node bench/baseline/server.mjs
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import SQLite from 'better-sqlite3';
import pg from 'pg';

const PAGE_SIZE = 20;
const USER_COLUMNS = 'id, username, email, is_active, date_joined';
const SQL = {
  tokenUser:
    'SELECT users.id FROM auth_tokens INNER JOIN users ON users.id = auth_tokens.user_id WHERE auth_tokens.key_hash = $1 AND users.is_active = $2',
  activeCount: 'SELECT count(*) AS count FROM users WHERE is_active = $1',
  activePage: `SELECT ${USER_COLUMNS} FROM users WHERE is_active = $1 ORDER BY date_joined DESC, id ASC LIMIT $2 OFFSET $3`,
  user: `SELECT ${USER_COLUMNS} FROM users WHERE id = $1`,
  publishedPosts: 'SELECT id, title, content, published, created_at, updated_at FROM posts WHERE published = $1 ORDER BY created_at DESC, id DESC',
};

/** name → (parameters) → rows, on whichever driver DATABASE_URL names. */
function openQueries(url) {
  if (url.startsWith('sqlite:')) {
    const connection = new SQLite(url.slice('sqlite:'.length), { readonly: true });
    const statements = Object.fromEntries(
      Object.entries(SQL).map(([name, text]) => [name, connection.prepare(text.replace(/\$\d+/g, '?'))]),
    );
    return async (name, parameters) => statements[name].all(...parameters.map((value) => (typeof value === 'boolean' ? Number(value) : value)));
  }
  const pool = new pg.Pool({ connectionString: url, max: 25, min: 5 });
  return async (name, values) => (await pool.query({ name, text: SQL[name], values })).rows;
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
const postRecord = (row) => ({
  id: Number(row.id),
  title: row.title,
  content: row.content,
  published: Boolean(row.published),
  created_at: isoTime(row.created_at),
  updated_at: isoTime(row.updated_at),
});

function send(response, status, body) {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

async function authenticated(request) {
  const match = /^Bearer (rf_[A-Za-z0-9_-]{43})$/.exec(request.headers.authorization ?? '');
  if (!match) return false;
  const rows = await query('tokenUser', [createHash('sha256').update(match[1]).digest('hex'), true]);
  return rows.length === 1;
}

async function handle(request, response) {
  const url = new URL(request.url, `http://${request.headers.host}`);
  if (url.pathname === '/api/posts') return send(response, 200, (await query('publishedPosts', [true])).map(postRecord));
  if (!(await authenticated(request))) return send(response, 401, { detail: 'Authentication credentials were not provided.' });
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
    return send(response, 200, {
      count: total,
      next: page * PAGE_SIZE < total ? link(page + 1) : null,
      previous: page > 1 ? link(page - 1) : null,
      results: rows.map(userRecord),
    });
  }
  const detail = /^\/api\/v1\/users\/(\d+)\/$/.exec(url.pathname);
  if (detail) {
    const [row] = await query('user', [Number(detail[1])]);
    return row ? send(response, 200, userRecord(row)) : send(response, 404, { detail: 'Not found.' });
  }
  return send(response, 404, { detail: 'Not found.' });
}

createServer((request, response) => {
  handle(request, response).catch((error) => {
    console.error(error);
    send(response, 500, { detail: 'Server error.' });
  });
}).listen(Number(process.env.PORT ?? 8001), '127.0.0.1', () => console.log('baseline listening'));

// Exit normally on a signal, so `node --cpu-prof` writes its profile.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
