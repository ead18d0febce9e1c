/**
 * The pages of the framework's users and groups, under `<admin>/auth/` (Django's `auth` app):
 *   groups/ (list, bulk delete) · groups/add/ · groups/<id>/change/ · groups/<id>/delete/
 *   · users/ · users/<id>/change/ · users/<id>/password/
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AdminSite } from '../site.js';
import { deleteGroups, groupForm } from './group-pages.js';
import { authList } from './lists.js';
import { pagePath } from './auth-paths.js';
import { userForm, userPassword } from './user-pages.js';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

export function mountAuth(app: FastifyInstance, site: AdminSite, formOf: (request: FastifyRequest) => URLSearchParams): void {
  const hidden = { schema: { hide: true } };
  const groups = pagePath(site.root, 'groups');
  const users = pagePath(site.root, 'users');
  app.get(groups, hidden, (request, reply) => authList(site, 'groups', request, reply));
  app.post(groups, hidden, (request, reply) => {
    const form = formOf(request);
    if (form.get('action') === 'delete_selected') return deleteGroups(site, request, reply, form.getAll('_selected_action'), true, form);
    return authList(site, 'groups', request, reply);
  });
  app.get(`${groups}add/`, hidden, (request, reply) => groupForm(site, request, reply, undefined));
  app.post(`${groups}add/`, hidden, (request, reply) => groupForm(site, request, reply, undefined, formOf(request)));
  app.get(`${groups}:id/change/`, hidden, (request: IdRequest, reply) => groupForm(site, request, reply, request.params.id));
  app.post(`${groups}:id/change/`, hidden, (request: IdRequest, reply) => groupForm(site, request, reply, request.params.id, formOf(request)));
  app.get(`${groups}:id/delete/`, hidden, (request: IdRequest, reply) => deleteGroups(site, request, reply, [request.params.id], false));
  app.post(`${groups}:id/delete/`, hidden, (request: IdRequest, reply) => deleteGroups(site, request, reply, [request.params.id], false, formOf(request)));
  app.get(users, hidden, (request, reply) => authList(site, 'users', request, reply));
  app.get(`${users}:id/change/`, hidden, (request: IdRequest, reply) => userForm(site, request, reply, request.params.id));
  app.post(`${users}:id/change/`, hidden, (request: IdRequest, reply) => userForm(site, request, reply, request.params.id, formOf(request)));
  app.get(`${users}:id/password/`, hidden, (request: IdRequest, reply) => userPassword(site, request, reply, request.params.id));
  app.post(`${users}:id/password/`, hidden, (request: IdRequest, reply) => userPassword(site, request, reply, request.params.id, formOf(request)));
}
