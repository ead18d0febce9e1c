/** A browser's view of the admin for HTTP tests: a cookie jar, the forms' hidden CSRF field, and form posts. */
import type { TestApi } from './api.js';
import { PASSWORD } from './api.js';

export interface AdminReply {
  status: number;
  location: string | undefined;
  headers: Record<string, unknown>;
  body: string;
}

export interface AdminClient {
  get(url: string): Promise<AdminReply>;
  /** Posts `fields`, with the CSRF token of the last page read unless `fields` names its own. */
  post(url: string, fields: Record<string, string | string[]>): Promise<AdminReply>;
  /** The hidden CSRF field of the last page read. */
  readonly csrf: string;
  readonly cookies: Map<string, string>;
}

export function adminClient(api: TestApi): AdminClient {
  const cookies = new Map<string, string>();
  let csrf = '';
  async function send(method: 'GET' | 'POST', url: string, payload?: string): Promise<AdminReply> {
    const headers: Record<string, string> = { accept: 'text/html' };
    if (cookies.size > 0) headers.cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    if (payload !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await api.app.inject({ method, url, headers, payload });
    for (const cookie of response.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      const gone = cookie.value === '' || (cookie.expires !== undefined && cookie.expires.getTime() < Date.now());
      if (gone) cookies.delete(cookie.name);
      else cookies.set(cookie.name, cookie.value);
    }
    const found = /name="csrfmiddlewaretoken" value="([^"]*)"/.exec(response.body);
    if (found) csrf = found[1]!;
    const location = response.headers.location;
    return { status: response.statusCode, location: typeof location === 'string' ? location : undefined, headers: response.headers, body: response.body };
  }
  return {
    get: (url) => send('GET', url),
    post(url, fields) {
      const form = new URLSearchParams();
      if (!('csrfmiddlewaretoken' in fields)) form.append('csrfmiddlewaretoken', csrf);
      for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) form.append(name, one);
      return send('POST', url, form.toString());
    },
    get csrf() {
      return csrf;
    },
    cookies,
  };
}

/** A client logged in to the admin as `username` (whose password is PASSWORD). */
export async function loggedIn(api: TestApi, username: string): Promise<AdminClient> {
  const client = adminClient(api);
  await client.get('/admin/login/');
  const reply = await client.post('/admin/login/', { username, password: PASSWORD, next: '/admin/' });
  if (reply.status !== 302) throw new Error(`login as ${username}: ${reply.status}`);
  return client;
}

/** Makes a user staff, as `createuser --staff` does. */
export async function makeStaff(api: TestApi, id: number): Promise<void> {
  await api.database.db.updateTable('users').set({ is_staff: 1 }).where('id', '=', id).execute();
}
