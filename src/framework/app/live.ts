/**
 * Live changes across processes (docs/guides/live-changes.md): every committed write's
 * change (store/changes/changes.ts: table, kind, ids) reaches the LiveHub of every process serving the app,
 * through what the deployment already runs. With REDIS_URL, Redis pub/sub (a connection of its own
 * subscribes); else, where the database carries notifications (PostgreSQL), LISTEN/NOTIFY, heard on
 * LIVE_DATABASE_URL, on a connection of its own (a direct one: not through a transaction pooler); else (SQLite) this
 * process alone. Each process sends its changes one after another, in commit order. When the channel
 * was lost and is back, changes may have been missed: every stream is told to refetch (`reset`).
 * The same carrier tells every process whose credentials or rights changed (a users row deleted, or
 * updated beyond its e-mail and date joined, a token revoked, a session ended: `credentialsChanged`), and each checks those users'
 * streams again; and that a group, its permissions or its members changed (`rightsChanged`), when
 * each checks every authenticated stream again (a group's members are known only before the change).
 */
import { setTimeout } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { tellingChanges, type Change } from '../../store/changes/changes.js';
import type { Database } from '../../store/connection/database.js';
import { listen, notifies, type ListenHandlers } from '../../store/changes/notifications.js';
import { CREDENTIAL_COLUMNS } from '../../store/accounts/users.js';
import { closeRedis } from '../base/redis.js';
import type { RecordId } from '../../store/read/records.js';
import type { Collection } from '../declare/collection.js';
import { LiveHub } from '../actions/live/hub.js';
import type { Config } from './config.js';
import { groupModels } from '../declare/users/group-models.js';
import { User } from '../declare/users/user-model.js';

/** Ids per notification: PostgreSQL takes at most 8000 bytes in one. */
const IDS_PER_NOTIFICATION = 100;

/**
 * Changes waiting to be sent, at most: writes faster than the carrier takes them would otherwise
 * queue without bound. Past it changes are dropped, and every process's streams told to refetch.
 */
const MAX_WAITING = 10_000;

/** How long a closing process goes on sending the changes it committed before it closes the carrier. */
const CLOSE_SENDING_MS = 5_000;

const KINDS = new Set(['created', 'updated', 'deleted']);

/**
 * The framework's users columns no credential carries (the e-mail, the date joined): an update of
 * only these checks no stream again. An app's own columns (User.extend) may be read by its
 * permissions, and do.
 */
const UNTOLD_USER_COLUMNS: ReadonlySet<string> = new Set(Object.keys(User.fields).filter((column) => !CREDENTIAL_COLUMNS.has(column)));

/** The users whose credentials or rights changed. */
interface Credentials {
  readonly credentials: readonly RecordId[];
}

/** What a process sends: a change, that changes were dropped and every stream must refetch, that users' credentials changed, or groups. */
export type Message = Change | { readonly reset: true } | Credentials | { readonly rights: true };

/** A message's ids, if it names any: its records', or its users'. */
const idsOf = (message: Message): readonly RecordId[] | undefined =>
  'reset' in message || 'rights' in message ? undefined : 'credentials' in message ? message.credentials : message.ids;

/** The framework's tables whose writes change what users hold (declare/users/groups.ts). */
const GROUP_TABLES: ReadonlySet<string> = new Set(groupModels.map(({ table }) => table));

/** A message as another process sent it (JSON), or undefined when it is none. */
function received(text: string): Message | undefined {
  try {
    const message = JSON.parse(text) as Partial<Change> & { reset?: unknown; credentials?: unknown; rights?: unknown };
    if (message.reset === true) return { reset: true };
    if (message.rights === true) return { rights: true };
    if (Array.isArray(message.credentials)) return { credentials: message.credentials as RecordId[] };
    return typeof message.table === 'string' && KINDS.has(message.kind!) && Array.isArray(message.ids) ? (message as Change) : undefined;
  } catch {
    return undefined;
  }
}

/** The hub hears a message: a change, or a reset. */
const hear = (hub: LiveHub, message: Message | undefined): void => {
  if (!message) return;
  if ('reset' in message) hub.reset();
  else if ('rights' in message) hub.rightsChanged();
  else if ('credentials' in message) hub.credentialsChanged(message.credentials);
  else hub.receive(message);
};

/** As JSON carries it: a bigint id as its digits. */
const sent = (message: Message): string =>
  JSON.stringify(message, (_name, value: unknown) => (typeof value === 'bigint' ? String(value) : value));

export type Send = (message: Message) => Promise<unknown>;

/** What carries the changes between processes: how one is sent, and how the carrier is closed. */
interface Carrier {
  readonly send: Send;
  close(): Promise<unknown>;
  /** PostgreSQL's LISTEN connection: whether it is up, for /readyz (Redis's state is told there already). */
  listening?(): boolean;
}

async function overRedis(app: FastifyInstance, hub: LiveHub, redis: Redis, prefix: string): Promise<Carrier> {
  const channel = `${prefix}changes`;
  const subscriber = redis.duplicate();
  subscriber.on('error', (error: Error) => app.log.warn({ err: error }, 'live changes: redis subscriber error'));
  await subscriber.connect();
  await subscriber.subscribe(channel);
  subscriber.on('message', (_channel: string, text: string) => hear(hub, received(text)));
  // Ready again after a reconnection: what was published meanwhile was not heard.
  subscriber.on('ready', () => hub.reset());
  return { send: (change) => redis.publish(channel, sent(change)), close: () => closeRedis(subscriber) };
}

async function overPostgres(app: FastifyInstance, hub: LiveHub, database: Database, config: Config): Promise<Carrier> {
  const url = config.liveDatabaseUrl;
  // Unnamed statements say a transaction pooler is in front, which would lose the LISTEN silently.
  const throughPooler = !url && !config.preparedStatements;
  if (throughPooler) {
    app.log.warn('live changes: DB_PREPARED_STATEMENTS=false says a transaction pooler serves DATABASE_URL, and a LISTEN through one is lost: set LIVE_DATABASE_URL to a direct connection, or REDIS_URL');
  }
  const handlers: ListenHandlers = {
    heard: (text) => hear(hub, received(text)),
    resumed: () => hub.reset(),
    failed: (error) => app.log.warn({ err: error }, 'live changes: the listening connection failed'),
    unheard: () =>
      app.log.warn('live changes: a notification sent through DATABASE_URL did not reach the listening connection, so other processes will not hear this one\'s changes: a transaction pooler loses a LISTEN; set LIVE_DATABASE_URL to a direct connection, or REDIS_URL'),
  };
  // Through a pooler, another client's server connection may hold the name of a statement prepared on it.
  const listening = await listen(database, url, handlers, { named: !throughPooler });
  const send: Send = async (message) => {
    const ids = idsOf(message);
    if (!ids) return listening.notify(sent(message));
    for (let start = 0; start < ids.length; start += IDS_PER_NOTIFICATION) {
      const part = ids.slice(start, start + IDS_PER_NOTIFICATION);
      await listening.notify(sent('credentials' in message ? { credentials: part } : { ...message, ids: part }));
    }
  };
  return { send, close: () => listening.close(), listening: () => listening.connected() };
}

/** Whether `next` may travel inside `message`: a change of the same table and kind, or both users whose credentials changed. */
const joins = (message: Message, next: Message): boolean =>
  'table' in message ? 'table' in next && next.table === message.table && next.kind === message.kind : 'credentials' in message && 'credentials' in next;

/**
 * `message`, with the messages of its kind that wait right behind it taken into it (up to
 * IDS_PER_NOTIFICATION ids): under load one message carries many writes, where each cost a round
 * trip (and on PostgreSQL a commit) of its own. A change's ids keep the order of the writes; a user
 * named twice in credentials is checked once.
 */
function gathered(message: Message, waiting: Message[]): Message {
  const first = idsOf(message);
  if (!first) return message;
  const ids = [...first];
  for (let next = waiting[0]; next && joins(message, next); next = waiting[0]) {
    const more = idsOf(next)!;
    if (ids.length + more.length > IDS_PER_NOTIFICATION) break;
    ids.push(...more);
    waiting.shift();
  }
  if (ids.length === first.length) return message;
  return 'credentials' in message ? { credentials: [...new Set(ids)] } : { ...message, ids };
}

/**
 * `publish`: `send` for each change in commit order, one after another (so that another process
 * hears this one's changes in that order), what waits behind a send going together, at most
 * MAX_WAITING of them waiting; a send that fails is `failed`'s. `sent`: settles once none is
 * waiting or being sent. A change is never held back once nothing is being sent: the other
 * processes send theirs at once, and a later write answered by one of them would be heard first.
 */
export function inOrder(send: Send, failed: (error: unknown) => void): { publish(message: Message): void; sent(): Promise<void> } {
  const waiting: Message[] = [];
  let dropped = false;
  let draining = false;
  let sending: Promise<void> = Promise.resolve();
  const drain = async (): Promise<void> => {
    draining = true;
    for (let message = waiting.shift(); message; message = waiting.shift()) {
      try {
        await send(gathered(message, waiting));
      } catch (error) {
        failed(error);
      }
      if (waiting.length === 0 && dropped) {
        dropped = false;
        waiting.push({ reset: true });
      }
    }
    draining = false;
  };
  return {
    publish(message) {
      if (waiting.length >= MAX_WAITING) dropped = true;
      else waiting.push(message);
      if (!draining) sending = drain();
    },
    sent: () => sending,
  };
}

/**
 * The app's hub when a collection is live, with the database its writes go through, which tells
 * the hub's carrier of every committed change (and of the credentials a committed write to
 * `usersTable` may have changed); else none, and the database as it was.
 */
export async function liveChanges(
  app: FastifyInstance,
  collections: readonly Collection[],
  database: Database,
  config: Config,
  redis: Redis | undefined,
  usersTable: string,
): Promise<{ database: Database; hub?: LiveHub; listening?: () => boolean }> {
  if (!collections.some(({ live }) => live)) return { database };
  const hub = new LiveHub(config.live, app.log);
  const carrier = redis
    ? await overRedis(app, hub, redis, config.redisKeyPrefix)
    : notifies(database)
      ? await overPostgres(app, hub, database, config)
      : undefined;
  if (carrier) {
    const changes = inOrder(carrier.send, (error) => app.log.warn({ err: error }, 'live changes: a change could not be sent'));
    hub.publish = (change) => changes.publish(change);
    hub.publishCredentials = (userIds) => changes.publish({ credentials: userIds });
    hub.publishRights = () => changes.publish({ rights: true });
    // A process stopped under writes (a deploy) still tells the others what it committed, for a while at most.
    app.addHook('onClose', async () => {
      await Promise.race([changes.sent(), setTimeout(CLOSE_SENDING_MS, undefined, { ref: false })]);
      await carrier.close();
    });
  }
  // Streams would keep the server's close waiting: they end first, asking their clients to come back.
  app.addHook('preClose', (done) => {
    hub.close();
    done();
  });
  // Streams are of the live collections' tables: another table's change would cost every write a
  // message to every process, and take a place in the ring from the changes streams replay.
  const tables = new Set(collections.filter(({ live }) => live).map(({ serializer }) => serializer.model.table));
  // A users row written (a password, is_active, is_superuser) may change what its user's streams may
  // read; an update of only the framework's other columns (an e-mail) changes nothing a credential gives.
  const listener = ({ table, kind, ids, columns }: Change): void => {
    if (tables.has(table)) hub.publish({ table, kind, ids });
    if (table === usersTable && kind !== 'created' && (!columns || columns.some((column) => !UNTOLD_USER_COLUMNS.has(column)))) hub.publishCredentials(ids);
    if (GROUP_TABLES.has(table)) hub.publishRights();
  };
  return { database: tellingChanges(database, listener), hub, listening: carrier?.listening };
}
