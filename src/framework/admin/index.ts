/**
 * The admin (Django's, at ADMIN_PREFIX, /admin/ by default): server-rendered pages for staff, over
 * the API's own collections and sessions (docs/admin.md). Django's URL layout:
 *   login/ logout/ · <collection>/ · <collection>/add/ · <collection>/<id>/change/ · <collection>/<id>/delete/
 *   · <collection>/<id>/history/ · <collection>/<id>/password/ (a collection that writes a password)
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { changeForm } from './change-form.js';
import { changeList, index } from './change-list.js';
import { deleteRecords } from './deletion.js';
import { history } from './history.js';
import { passwordChange } from './password.js';
import { logIn, logOut, showLogin } from './sign-in.js';
import type { AdminCollection, AdminSite } from './site.js';

export type { AdminCollection, AdminSite } from './site.js';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;
const formOf = (request: FastifyRequest): URLSearchParams => new URLSearchParams(typeof request.body === 'string' ? request.body : '');

const hidden = { schema: { hide: true } };

function mountCollection(app: FastifyInstance, site: AdminSite, entry: AdminCollection): void {
  const path = `${site.root}${entry.collection.name}/`;
  app.get(path, hidden, (request, reply) => changeList(site, entry, request, reply));
  // The change list's bulk action (the only one: delete the selection).
  app.post(path, hidden, (request, reply) => {
    const form = formOf(request);
    if (form.get('action') !== 'delete_selected') return changeList(site, entry, request, reply);
    return deleteRecords(site, entry, request, reply, form.getAll('_selected_action'), true, form);
  });
  app.get(`${path}add/`, hidden, (request, reply) => changeForm(site, entry, request, reply, undefined));
  app.post(`${path}add/`, hidden, (request, reply) => changeForm(site, entry, request, reply, undefined, formOf(request)));
  app.get(`${path}:id/change/`, hidden, (request: IdRequest, reply) => changeForm(site, entry, request, reply, request.params.id));
  app.post(`${path}:id/change/`, hidden, (request: IdRequest, reply) => changeForm(site, entry, request, reply, request.params.id, formOf(request)));
  app.get(`${path}:id/delete/`, hidden, (request: IdRequest, reply) => deleteRecords(site, entry, request, reply, [request.params.id], false));
  app.post(`${path}:id/delete/`, hidden, (request: IdRequest, reply) => deleteRecords(site, entry, request, reply, [request.params.id], false, formOf(request)));
  app.get(`${path}:id/history/`, hidden, (request: IdRequest, reply) => history(site, entry, request, reply, request.params.id));
  app.get(`${path}:id/password/`, hidden, (request: IdRequest, reply) => passwordChange(site, entry, request, reply, request.params.id));
  app.post(`${path}:id/password/`, hidden, (request: IdRequest, reply) => passwordChange(site, entry, request, reply, request.params.id, formOf(request)));
}

export async function adminSite(app: FastifyInstance, site: AdminSite): Promise<void> {
  // Its forms post application/x-www-form-urlencoded; nothing else.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.get(site.root.slice(0, -1), hidden, (_request, reply: FastifyReply) => reply.redirect(site.root, 301));
  app.get(site.root, hidden, (request, reply) => index(site, request, reply));
  app.get(`${site.root}login/`, hidden, (request: FastifyRequest<{ Querystring: { next?: string } }>, reply) => showLogin(site, request, reply));
  app.post(`${site.root}login/`, hidden, (request, reply) => logIn(site, request, reply, formOf(request)));
  app.post(`${site.root}logout/`, hidden, (request, reply) => logOut(site, request, reply, formOf(request)));
  for (const entry of site.collections) mountCollection(app, site, entry);
}
