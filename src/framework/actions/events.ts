/**
 * `GET /<name>/events/`: the collection's changes as Server-Sent Events, for the collection's
 * `live` option (docs/guides/live-changes.md). It runs through the pipeline as the
 * list does (views.ts: authentication, the list's permissions, throttling, negotiation, scope):
 * what a subscriber hears of is what their list would show them, the query string's filters and
 * search and `fields`/`omit` included. The stream then outlives the request: its response is taken
 * from Fastify (hijacked) and held by the process's LiveHub, which checks its credential and the
 * list's permissions again while it lives (`recheck`).
 */
import type { FastifyRequest } from 'fastify';
import type { Filter, ScopeCondition } from '../../core/list-query.js';
import type { Selection } from '../../core/rows.js';
import { readList } from '../../store/read/list.js';
import type { RecordId } from '../../store/read/records.js';
import type { AuthUser } from '../base/auth-user.js';
import { ApiError, authenticationFailed } from '../base/errors.js';
import type { Collection } from '../declare/collection.js';
import { checkPermissions } from '../stages/permissions.js';
import { chosenFields } from '../declare/serializer.js';
import { parseListQuery } from '../stages/list-params.js';
import { LIMIT_OFFSET_PARAMETERS } from './limit-offset.js';
import { selectionOf, type ActionRequest, type ActionResult, type ActionRoute } from './request.js';
import type { LiveHub, Subscription } from './live/hub.js';
import { EventStream } from './live/stream.js';
import { clientKey } from '../base/proxy.js';

/** The one representation of a stream; EventSource asks for it, and anything else is 406. */
const EVENT_STREAM = [{ mediaType: 'text/event-stream' }];

const idsOnly = new WeakMap<Collection, Selection>();

/** The collection's ids alone: what a stream remembers. */
function idSelection(collection: Collection): Selection {
  let selection = idsOnly.get(collection);
  if (!selection) idsOnly.set(collection, (selection = { table: collection.serializer.model.table, columns: ['id'], joins: [] }));
  return selection;
}

let unshared = 0;

/**
 * What makes two subscriptions read alike, as text; a scope holding a condition of the store's own
 * (a function, which text cannot compare) reads apart from every other.
 */
function groupKey(parts: Readonly<Record<string, unknown>>): string {
  let opaque = false;
  const text = JSON.stringify(parts, function (this: object, name, value: unknown) {
    // A RecordScope's (a reference's `within`) fields are the table's declarations, the same for
    // everyone; the request's own `fields`, its projection, tells subscribers apart.
    if ((name === 'fields' || name === 'across') && 'conditions' in this) return undefined;
    if (typeof value === 'function') opaque = true;
    return typeof value === 'bigint' ? `${value}n` : value;
  });
  return opaque ? `unshared ${++unshared}` : text;
}

/** The request's user as its credential names them now (the authentication stage run again on its headers). */
export type Reauthenticate = (request: FastifyRequest) => Promise<AuthUser | null>;

/**
 * Whether the rights a stream opened with hold now: its credential names the same user, of the same
 * standing (as the scope was computed: a superuser or staff member no longer one, or a renamed
 * user, would be scoped otherwise), who passes the list's permissions; else the 401 or 403 its
 * request would get.
 */
async function rightsNow(action: ActionRequest, reauthenticate: Reauthenticate): Promise<ApiError | undefined> {
  const { user, request, permissions } = action;
  try {
    const now = await reauthenticate(request);
    if (user && (now?.id !== user.id || now.isSuperuser !== user.isSuperuser || now.isStaff !== user.isStaff || now.username !== user.username)) return authenticationFailed('The credential no longer names the user the stream was opened for, as they stood.');
    await checkPermissions(permissions, { user: now, action: 'list' });
    return undefined;
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return error;
    throw error;
  }
}

async function subscribe(action: ActionRequest, hub: LiveHub, reauthenticate: Reauthenticate): Promise<ActionResult> {
  const { collection, parameters, request, reply, reader, user } = action;
  const { database } = reader;
  const byWindow = collection.pagination === 'limit_offset';
  const { filters, search } = parseListQuery(parameters, collection.queryRules, byWindow ? LIMIT_OFFSET_PARAMETERS : []);
  const scope: readonly ScopeCondition[] | undefined = action.scope?.conditions;
  const serializer = chosenFields(collection.serializerFor(action), parameters);
  const source = { ...collection.listSource, selection: selectionOf(action, serializer) };
  const among = (extra: readonly Filter[], pageSize: number) => ({ page: 1, pageSize, search, ordering: [], filters: [...filters, ...extra], scope });
  const read = (plan: Pick<Parameters<typeof readList>[1], 'source' | 'query'>) => readList(database, { ...plan, paging: { by: 'number' }, count: 'none', estimateThreshold: 0 });
  const context = { user, request, links: action.links, version: action.version, fileLinks: action.fileLinks };
  const lastEventId = request.headers['last-event-id'];
  const subscription: Subscription = {
    table: collection.serializer.model.table,
    // Who reads matters where the selection or the rows a request sees depend on the user.
    group: groupKey({
      collection: collection.name,
      version: action.version,
      // The serializer chosen for this request (chooseSerializer), by its name: one per schema in the document.
      serializer: serializer.name,
      scope,
      filters,
      search,
      fields: parameters.get('fields'),
      omit: parameters.get('omit'),
      user: serializer.perUser || database.scopes ? user?.id : undefined,
    }),
    track: collection.live!.track,
    owner: user ? `user ${String(user.id)}` : `address ${clientKey(request)}`,
    userId: user?.id,
    recheck: () => rightsNow(action, reauthenticate),
    lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined,
    read: async (ids: readonly RecordId[]) => (await read({ source, query: among([{ field: 'id', lookup: 'in', value: ids }], ids.length) })).rows,
    visibleIds: async (limit: number) => (await read({ source: { ...source, selection: idSelection(collection) }, query: among([], limit + 1) })).rows.map((row) => row.id as RecordId),
    render: (row) => serializer.render(row, context),
    rendersAlike: serializer.rendersFromRow,
  };
  hub.subscribe(subscription, (closed) => {
    reply.hijack();
    return new EventStream(reply.raw, reply.getHeaders(), hub.limits, closed);
  });
  return { status: 200 };
}

/** The stream of a live collection's changes, as the pipeline runs it: with the list's permissions. */
export function eventsRoute(hub: LiveHub, reauthenticate: Reauthenticate): ActionRoute {
  return {
    action: 'list',
    mediaTypes: EVENT_STREAM,
    takesBody: false,
    enveloped: false,
    run: (action) => subscribe(action, hub, reauthenticate),
  };
}
