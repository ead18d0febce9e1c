/**
 * A group's permission taken away on the admin's form reaches the open live streams of its members
 * on every worker (docs/admin.md, Users and groups; docs/authentication.md, Live streams): `restfold
 * serve` with WORKERS=2 over LISTEN/NOTIFY, the periodic check out of the way (LIVE_RECHECK_MS an
 * hour), a member's streams open on both workers; a staff user unpicks the grant on
 * /admin/auth/groups/<id>/change/ and every stream ends with `revoked` within 5 s.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openEvents, type EventStreamClient } from '../support/event-stream.js';
import { cliWorkspace, startServer } from '../support/spawned-server.js';

/** An app whose live list needs `reports.view` (asked of the user or their groups). */
const APP = `
import { collection, defineApp, fields, model, modelPermissions, serializer } from 'restfold';
const Report = model('reports', { id: fields.id(), title: fields.string({ maxLength: 50 }) });
const reports = collection('reports', { serializer: serializer(Report, { fields: ['id', 'title'], readOnly: ['id'] }), live: true, permissions: modelPermissions('reports', { view: true }) });
export default defineApp({ collections: [reports] });
`;

/** A browser's cookies and the last page's CSRF field, over fetch. */
function browser(base: string) {
  const cookies = new Map<string, string>();
  let csrf = '';
  return {
    get csrf() {
      return csrf;
    },
    async send(path: string, form?: Record<string, string | string[]>): Promise<{ status: number; body: string; location: string | null }> {
      const body = form && new URLSearchParams(Object.entries({ csrfmiddlewaretoken: csrf, ...form }).flatMap(([name, value]) => [value].flat().map((one) => [name, one])));
      const response = await fetch(`${base}${path}`, {
        method: form ? 'POST' : 'GET',
        redirect: 'manual',
        headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '), ...(body && { 'content-type': 'application/x-www-form-urlencoded' }) },
        body,
      });
      for (const set of response.headers.getSetCookie()) {
        const [pair] = set.split(';');
        const at = pair!.indexOf('=');
        cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
      }
      const text = await response.text();
      csrf = /name="csrfmiddlewaretoken" value="([^"]*)"/.exec(text)?.[1] ?? csrf;
      return { status: response.status, body: text, location: response.headers.get('location') };
    },
  };
}

describe('a group changed on the admin, across the workers of one server', () => {
  const workspace = cliWorkspace('postgres', 'admin-groups-live');

  it("ends its members' streams on both workers within 5 s", async () => {
    writeFileSync(workspace.app, APP);
    expect(workspace.cli('makemigrations').status).toBe(0);
    const env = { DATABASE_URL: workspace.databaseUrl(), WORKERS: '2', LIVE_RECHECK_MS: '3600000', THROTTLE_USER: 'off', THROTTLE_ANON: 'off', THROTTLE_LOGIN: 'off' };
    const server = await startServer({ appArgs: ['--app', workspace.app], env });
    const opened: EventStreamClient[] = [];
    try {
      server.cli(['createuser', '--username', 'boss', '--password', 'boss-password', '--superuser']);
      server.cli(['groups', 'create', 'readers', '--permission', 'reports.view']);
      server.cli(['createuser', '--username', 'reader', '--password', 'reader-password', '--group', 'readers']);
      const token = server.cli(['token', 'create', '--username', 'reader']).trim();
      const byWorker = new Map<unknown, EventStreamClient>();
      for (let attempt = 0; attempt < 8 && byWorker.size < 2; attempt++) {
        const stream = await openEvents(`${server.url}/api/v1/reports/events/`, { authorization: `Bearer ${token}` });
        opened.push(stream);
        expect(stream.status).toBe(200);
        if (!byWorker.has(stream.headers['x-worker-id'])) byWorker.set(stream.headers['x-worker-id'], stream);
      }
      expect(byWorker.size).toBe(2);

      const admin = browser(server.url);
      await admin.send('/admin/login/');
      expect((await admin.send('/admin/login/', { username: 'boss', password: 'boss-password', next: '/admin/' })).status).toBe(302);
      const list = await admin.send('/admin/auth/groups/');
      const change = /href="(\/admin\/auth\/groups\/\d+\/change\/)">readers</.exec(list.body)?.[1];
      expect(change).toBeDefined();
      const form = await admin.send(change!);
      expect(form.body).toContain('name="initial_permissions" value="reports.view"');
      const saved = await admin.send(change!, { name: 'readers', initial_permissions: 'reports.view' });
      expect(saved.status).toBe(302);
      const rests = await Promise.all([...byWorker.values()].map((stream) => stream.ended(5000)));
      for (const rest of rests) expect(rest.map(({ event, data }) => [event, data.code])).toEqual([['revoked', 'permission_denied']]);
    } finally {
      opened.forEach((stream) => stream.close());
      await server.stop();
    }
  }, 90_000);
});
