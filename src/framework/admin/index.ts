/**
 * The admin (Django's, at ADMIN_PREFIX, /admin/ by default): server-rendered pages for staff, over
 * the API's own collections and sessions (docs/admin.md). Django's URL layout:
 *   login/ logout/ · <collection>/ · <collection>/add/ · <collection>/<id>/change/ · <collection>/<id>/delete/
 *   · <collection>/<id>/history/ · <collection>/<id>/password/ (a collection that writes a password)
 *   · <collection>/<id>/inline/<nested>/ (add) and …/change/ (change and delete the listed rows)
 *   · auth/groups/… and auth/users/… (the framework's own: auth/routes.ts)
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { runAction } from './actions.js';
import { addInline, changeForm, type Posted } from './change-form.js';
import { changeInlineRows } from './inline-rows.js';
import { lookup } from './lookup.js';
import { keepMultipartUnread } from '../routing/router.js';
import { changeList, index } from './change-list.js';
import { deleteRecords } from './deletion.js';
import { history } from './history.js';
import { passwordChange } from './password.js';
import { logIn, logOut, showLogin } from './sign-in.js';
import type { AdminCollection, AdminSite } from './site.js';
import { mountAuth } from './auth/routes.js';

export type { AdminCollection, AdminSite } from './site.js';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;
const formOf = (request: FastifyRequest): URLSearchParams => new URLSearchParams(typeof request.body === 'string' ? request.body : '');
/** An add or change form's post: its fields, or (a form with files) its body left unread, to stream on to the API. */
const postedTo = (request: FastifyRequest): Posted => (typeof request.body === 'string' ? { form: new URLSearchParams(request.body) } : { unread: true });

const hidden = { schema: { hide: true } };

function mountCollection(app: FastifyInstance, site: AdminSite, entry: AdminCollection): void {
  const path = `${site.root}${entry.collection.name}/`;
  app.get(path, hidden, (request, reply) => changeList(site, entry, request, reply));
  // The change list's bulk actions: delete the selection, or one of the app's declared actions.
  app.post(path, hidden, (request, reply) => {
    const form = formOf(request);
    const action = form.get('action') ?? '';
    if (action === 'delete_selected') return deleteRecords(site, entry, request, reply, form.getAll('_selected_action'), true, form);
    if (Object.hasOwn(entry.options.actions ?? {}, action)) return runAction(site, entry, request, reply, action, form);
    return changeList(site, entry, request, reply);
  });
  app.get(`${path}add/`, hidden, (request, reply) => changeForm(site, entry, request, reply, undefined));
  app.post(`${path}add/`, hidden, (request, reply) => changeForm(site, entry, request, reply, undefined, postedTo(request)));
  app.get(`${path}:id/change/`, hidden, (request: IdRequest, reply) => changeForm(site, entry, request, reply, request.params.id));
  app.post(`${path}:id/change/`, hidden, (request: IdRequest, reply) => changeForm(site, entry, request, reply, request.params.id, postedTo(request)));
  app.post(`${path}:id/inline/:child/`, hidden, (request: FastifyRequest<{ Params: { id: string; child: string } }>, reply) =>
    addInline(site, entry, request, reply, request.params.id, request.params.child, formOf(request)),
  );
  app.post(`${path}:id/inline/:child/change/`, hidden, (request: FastifyRequest<{ Params: { id: string; child: string } }>, reply) =>
    changeInlineRows(site, entry, request, reply, request.params.id, request.params.child, formOf(request)),
  );
  app.get(`${path}lookup/`, hidden, (request, reply) => lookup(site, entry, request, reply));
  app.get(`${path}:id/delete/`, hidden, (request: IdRequest, reply) => deleteRecords(site, entry, request, reply, [request.params.id], false));
  app.post(`${path}:id/delete/`, hidden, (request: IdRequest, reply) => deleteRecords(site, entry, request, reply, [request.params.id], false, formOf(request)));
  app.get(`${path}:id/history/`, hidden, (request: IdRequest, reply) => history(site, entry, request, reply, request.params.id));
  app.get(`${path}:id/password/`, hidden, (request: IdRequest, reply) => passwordChange(site, entry, request, reply, request.params.id));
  app.post(`${path}:id/password/`, hidden, (request: IdRequest, reply) => passwordChange(site, entry, request, reply, request.params.id, formOf(request)));
}

export async function adminSite(app: FastifyInstance, site: AdminSite): Promise<void> {
  // Its forms post application/x-www-form-urlencoded, or multipart/form-data with files; nothing else.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  // A form with files (the add and change forms of a collection with file fields): never buffered here; streamed on to the API.
  keepMultipartUnread(app, site.uploads.maxBodyBytes);
  app.get(site.root.slice(0, -1), hidden, (_request, reply: FastifyReply) => reply.redirect(site.root, 301));
  app.get(site.root, hidden, (request, reply) => index(site, request, reply));
  app.get(`${site.root}login/`, hidden, (request: FastifyRequest<{ Querystring: { next?: string } }>, reply) => showLogin(site, request, reply));
  app.post(`${site.root}login/`, hidden, (request, reply) => logIn(site, request, reply, formOf(request)));
  app.post(`${site.root}logout/`, hidden, (request, reply) => logOut(site, request, reply, formOf(request)));
  for (const entry of site.collections) mountCollection(app, site, entry);
  mountAuth(app, site, formOf);
}
