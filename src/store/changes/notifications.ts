/**
 * Notifications between processes through the database itself (PostgreSQL's LISTEN/NOTIFY), where
 * its dialect has them: live changes cross processes this way when no Redis is configured. Each
 * process holds one connection of its own for them, which listens and sends (`pg_notify`, after
 * the write committed), so that they take nothing from the pool the requests share. It must be a
 * direct (or session) connection: a transaction pooler hands each transaction another server
 * connection, and a LISTEN would be lost with it. The channel is named after the connection's
 * schema, so that apps in different schemas of one database hear only their own.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { storeDatabase, type Database } from '../connection/database.js';

/** After losing the listening connection, how long before connecting again. */
const RECONNECT_MS = 1000;

/** How long a notification sent through the pool may take to reach the listening connection before it is taken as lost. */
const PROBE_MS = 5000;

export interface Listening {
  /** Sends `payload` (at most 8000 bytes: PostgreSQL's limit) to every process listening, this one included. */
  notify(payload: string): Promise<void>;
  /** Whether the listening connection is up (false between losing it and connecting again). */
  connected(): boolean;
  close(): Promise<void>;
}

export interface ListenHandlers {
  /** A notification's payload. */
  heard(payload: string): void;
  /** Listening again after the connection was lost: what was sent meanwhile was not heard. */
  resumed(): void;
  failed(error: Error): void;
  /**
   * A notification sent through the pool (`database`'s connections) did not reach the listening
   * connection: a transaction pooler stands between, where a LISTEN is lost with its server connection.
   */
  unheard(): void;
}

/**
 * The URL with its application name (the URL's, else `restfold`) ending in `-listen`: the
 * connection is one per process beside the pool (DB_MAX_CONNECTIONS counts the pool's), and tells
 * itself apart in pg_stat_activity.
 */
function listenerUrl(url: string): string {
  const tagged = new URL(url);
  tagged.searchParams.set('application_name', `${tagged.searchParams.get('application_name') ?? 'restfold'}-listen`);
  return tagged.toString();
}

/** Whether `database` can carry notifications between processes. */
export const notifies = (database: Database): boolean => storeDatabase(database).capabilities.notifies;

/**
 * Listens for the channel of its schema on `url` (a direct connection), by default the one `database`
 * was opened with. `named`: whether the notifications may be sent as a named statement, prepared once
 * on the connection; not through a transaction pooler, where another client's connection may hold
 * the name already.
 */
export async function listen(database: Database, url: string | undefined, handlers: ListenHandlers, { named }: { named: boolean }): Promise<Listening> {
  const connectionString = listenerUrl(url ?? storeDatabase(database).url ?? '');
  let closed = false;
  let client: pg.Client | undefined;
  let channel = '';
  // A payload of this process's own (no other process's message looks like it): is a notification sent through the pool heard?
  const probe = `probe:${randomUUID()}`;
  // Named: prepared once on the connection, not parsed again for every notification.
  const name = named ? 'restfold_notify' : undefined;
  let probeHeard: () => void = () => undefined;
  const connect = async (): Promise<void> => {
    const connecting = new pg.Client({ connectionString });
    connecting.on('notification', ({ channel: heardOn, payload }) => {
      if (heardOn !== channel || payload === undefined) return;
      if (payload === probe) probeHeard();
      else handlers.heard(payload);
    });
    connecting.on('error', (error) => {
      handlers.failed(error);
      connecting.end().catch(() => undefined);
    });
    connecting.on('end', () => {
      if (closed || client !== connecting) return;
      client = undefined;
      setTimeout(reconnect, RECONNECT_MS).unref();
    });
    await connecting.connect();
    const { rows } = await connecting.query<{ schema: string }>('SELECT current_schema() AS schema');
    channel = `restfold_changes:${rows[0]!.schema}`;
    await connecting.query(`LISTEN ${connecting.escapeIdentifier(channel)}`);
    client = connecting;
  };
  const reconnect = (): void => {
    if (closed) return;
    connect().then(handlers.resumed, (error: Error) => {
      handlers.failed(error);
      setTimeout(reconnect, RECONNECT_MS).unref();
    });
  };
  await connect();
  // Not awaited: start-up goes on, and the warning follows if it must.
  void new Promise<boolean>((resolve) => {
    probeHeard = () => resolve(true);
    setTimeout(() => resolve(false), PROBE_MS).unref();
    database.run('SELECT pg_notify($1, $2)', [channel, probe]).catch(() => resolve(true));
  }).then((heard) => {
    if (!heard && !closed) handlers.unheard();
  });
  return {
    async notify(payload) {
      if (!client) throw new Error('The connection live changes are sent on is lost; connecting again.');
      await client.query({ name, text: 'SELECT pg_notify($1, $2)', values: [channel, payload] });
    },
    connected: () => client !== undefined,
    async close() {
      closed = true;
      await client?.end();
    },
  };
}
