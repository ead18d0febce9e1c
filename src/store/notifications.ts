/**
 * Notifications between processes through the database itself (PostgreSQL's LISTEN/NOTIFY), where
 * its dialect has them: live changes cross processes this way when no Redis is configured. Each
 * process holds one connection of its own for them, which listens and sends (`pg_notify`, after
 * the write committed), so that they take nothing from the pool the requests share. It must be a
 * direct (or session) connection: a transaction pooler hands each transaction another server
 * connection, and a LISTEN would be lost with it. The channel is named after the connection's
 * schema, so that apps in different schemas of one database hear only their own.
 */
import pg from 'pg';
import { storeDatabase, type Database } from './database.js';

/** After losing the listening connection, how long before connecting again. */
const RECONNECT_MS = 1000;

export interface Listening {
  /** Sends `payload` (at most 8000 bytes: PostgreSQL's limit) to every process listening, this one included. */
  notify(payload: string): Promise<void>;
  close(): Promise<void>;
}

export interface ListenHandlers {
  /** A notification's payload. */
  heard(payload: string): void;
  /** Listening again after the connection was lost: what was sent meanwhile was not heard. */
  resumed(): void;
  failed(error: Error): void;
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

/** Listens for the channel of its schema on `url` (a direct connection), by default the one `database` was opened with. */
export async function listen(database: Database, url: string | undefined, handlers: ListenHandlers): Promise<Listening> {
  const connectionString = listenerUrl(url ?? storeDatabase(database).url ?? '');
  let closed = false;
  let client: pg.Client | undefined;
  let channel = '';
  const connect = async (): Promise<void> => {
    const connecting = new pg.Client({ connectionString });
    connecting.on('notification', ({ channel: heardOn, payload }) => {
      if (heardOn === channel && payload !== undefined) handlers.heard(payload);
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
  return {
    async notify(payload) {
      if (!client) throw new Error('The connection live changes are sent on is lost; connecting again.');
      await client.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    async close() {
      closed = true;
      await client?.end();
    },
  };
}
