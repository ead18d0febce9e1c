/**
 * The browsable API: what a browser gets from any endpoint under /api/v1 —
 * the JSON result with its status and headers, pagination links, list
 * controls from the collection's declaration, and forms to create, edit and
 * delete, usable with a session login.
 */
import { readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { pathEnd } from '../../base/style.js';
import type { Collection } from '../../declare/collection.js';
import type { AuthUser } from '../../base/auth-user.js';
import type { Action } from '../../declare/permission-classes.js';
import { appWide } from '../../base/app-wide.js';
import { queryParameters } from '../../base/query-string.js';
import { Page, type PageLink, type PageModel } from './page.js';

export interface BrowsableContext {
  readonly collection?: Collection;
  readonly action?: Action;
  /**
   * A custom action's page: shown as the action it stands for (a list's controls and links), but
   * without the forms and extra actions of its collection's own paths, which its path does not answer.
   */
  readonly custom?: boolean;
  /** The API's root path, e.g. /api/v1/. */
  readonly root: string;
  readonly loginUrl?: string;
  readonly logoutUrl?: string;
  /** The collections mounted under each record of this one (nested collections), linked from a record's page. */
  readonly nested?: readonly string[];
}

/** Response headers worth showing a reader. */
const SHOWN_HEADERS = ['allow', 'content-type', 'etag', 'location', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'www-authenticate'];

/** The links from the API root down to the page, spelt as the page's router spells paths. */
function breadcrumbs(request: FastifyRequest, root: string): PageLink[] {
  const path = request.url.split('?')[0]!;
  const crumbs: PageLink[] = [{ label: 'API root', href: root }];
  const base = root.replace(/\/?$/, '/');
  const parts = path.slice(base.length).split('/').filter(Boolean);
  parts.forEach((part, index) => crumbs.push({ label: part, href: `${base}${parts.slice(0, index + 1).join('/')}${pathEnd(request)}` }));
  return crumbs;
}

/** Query parameters that choose a page, which a stream of changes has none of. */
const PAGING = ['page', 'page_size', 'cursor', 'limit', 'offset'];

/** The stream of a live list's changes, with the list's own filters. */
function eventsUrl(request: FastifyRequest, path: string, segment: string): string {
  const query = new URLSearchParams(request.url.split('?')[1] ?? '');
  for (const name of PAGING) query.delete(name);
  const events = path.endsWith('/') ? `${path}${segment}/` : `${path}/${segment}`;
  return query.size > 0 ? `${events}?${query.toString()}` : events;
}

/** The collection's custom actions on the list (`list`) or on the record shown (`retrieve`), as links. */
function extraActions(collection: Collection, action: Action | undefined, path: string): PageLink[] | undefined {
  if (action !== 'list' && action !== 'retrieve') return undefined;
  return Object.entries(collection.customActions)
    .filter(([, declared]) => declared.detail === (action === 'retrieve'))
    .map(([name, declared]) => ({ label: `${name} (${declared.method})`, href: `${path.replace(/\/?$/, '/')}${declared.path ?? name}/` }));
}

/** The form of a list (create) or a record (update), with a button per write the collection serves; none without one. */
function recordForm(collection: Collection, action: Action | undefined, record: Record<string, unknown> | undefined, user: AuthUser | null): PageModel['form'] {
  const served = collection.builtInActions;
  if (action === 'list') return served.has('create') ? { kind: 'create', serializer: collection.serializerFor({ action: 'create', user }), buttons: [{ method: 'POST', label: 'Create' }] } : undefined;
  if (action !== 'retrieve') return undefined;
  const buttons = [
    ...(served.has('update') ? [{ method: 'PUT', label: collection.putMode === 'update' ? 'Replace (PUT)' : 'Update (PUT)' } as const] : []),
    ...(served.has('partial_update') ? [{ method: 'PATCH', label: 'Update (PATCH)' } as const] : []),
  ];
  if (buttons.length === 0) return undefined;
  return { kind: 'edit', serializer: collection.serializerFor({ action: served.has('update') ? 'update' : 'partial_update', user }), values: record, buttons };
}

function listControls(collection: Collection, request: FastifyRequest): PageModel['controls'] {
  const parameters = queryParameters(request.url);
  const { filters, ordering } = collection.queryRules;
  return {
    search: collection.serializer.search.length > 0,
    searchValue: parameters.get('search') ?? '',
    ordering,
    orderingValue: parameters.get('ordering') ?? '',
    filters: [...filters.entries()],
    values: parameters,
  };
}

export function renderPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  body: unknown,
  context: BrowsableContext,
): string {
  const { collection, action } = context;
  const headers = SHOWN_HEADERS.flatMap((name): [string, string][] => {
    const value = name === 'content-type' ? 'application/json' : reply.getHeader(name);
    return value === undefined ? [] : [[name, String(value)]];
  });
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : undefined;
  const succeeded = status < 400;
  const crumbs = breadcrumbs(request, context.root);
  const path = request.url.split('?')[0]!;
  const model: PageModel = {
    title: collection && action !== 'list' && record?.[collection.recordKey.field] !== undefined ? `${collection.name} ${String(record[collection.recordKey.field])}` : crumbs.at(-1)!.label,
    breadcrumbs: crumbs,
    method: request.method,
    path,
    status,
    statusText: STATUS_CODES[status] ?? '',
    headers,
    body,
    user: request.user,
    csrfToken: request.csrfToken,
    loginUrl: context.loginUrl,
    logoutUrl: context.logoutUrl,
    pagination:
      action === 'list' && succeeded && record
        ? { previous: (record.previous as string | null) ?? null, next: (record.next as string | null) ?? null }
        : undefined,
    controls: collection && action === 'list' ? listControls(collection, request) : undefined,
    form: collection && succeeded && !context.custom ? recordForm(collection, action, record, request.user ?? null) : undefined,
    allowDelete: collection !== undefined && action === 'retrieve' && succeeded && !context.custom && collection.builtInActions.has('destroy'),
    extraActions: collection && succeeded && !context.custom ? extraActions(collection, action, path) : undefined,
    nested: action === 'retrieve' && succeeded && !context.custom ? context.nested?.map((name) => ({ label: name, href: `${path}${name}/` })) : undefined,
    live: collection?.live && action === 'list' && succeeded && !context.custom ? eventsUrl(request, path, collection.live.path) : undefined,
  };
  return `<!doctype html>\n${renderToString(h(Page, { model }))}`;
}

const STATIC = new URL('../../../../static/', import.meta.url);
const assets: Record<string, string> = {
  'browsable.js': 'text/javascript; charset=utf-8',
  // The admin's pickers (its pages work without it).
  'admin.js': 'text/javascript; charset=utf-8',
  // The filter box above the admin's permission and group multi-selects (they work without it).
  'admin-filter.js': 'text/javascript; charset=utf-8',
  'browsable.css': 'text/css; charset=utf-8',
};

/** The page's own script and style sheet, served by the service itself (nothing from a CDN). */
export const browsableAssets = appWide('browsable-assets', async (app) => {
  for (const [name, type] of Object.entries(assets)) {
    const content = readFileSync(new URL(name, STATIC), 'utf8');
    app.get(`/api/static/${name}`, { schema: { hide: true } }, async (_request, reply) =>
      reply.type(type).header('Cache-Control', 'public, max-age=3600').send(content),
    );
  }
});
