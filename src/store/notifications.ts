/**
 * Notifications between processes through the database itself (PostgreSQL's LISTEN/NOTIFY), where
 * its dialect has them: live changes cross processes this way when no Redis is configured. A
 * notification is sent by one statement on any connection, after the write committed; it is heard
 * on a connection of its own, held for the process's life, which must be a direct (or session)
 * connection: a transaction pooler hands each transaction another server connection, and a LISTEN
 * would be lost with it. The channel is named after the connection's schema, so that apps in
 * different schemas of one database hear only their own.
 */
import pg from 'pg';
import { storeDatabase, type Database } from './database.js';

/** After losing the listening connection, how long before connecting again. */
const RECONNECT_MS = 1000;

export interface Listening {
  /** The channel its process sends on (`notify`). */
  readonly channel: string;
  close(): Promise<void>;
}

export interface ListenHandlers {
  /** A notification's payload. */
  heard(payload: string): void;
  /** Listening again after the connection was lost: what was sent meanwhile was not heard. */
  resumed(): void;
  failed(error: Error): void;
}

/** Whether `database` can carry notifications between processes. */
export const notifies = (database: Database): boolean => storeDatabase(database).capabilities.notifies;

/** Listens on `url` (a direct connection) for the channel of its schema. */
export async function listen(url: string, handlers: ListenHandlers): Promise<Listening> {
  let closed = false;
  let client: pg.Client | undefined;
  let channel = '';
  const connect = async (): Promise<void> => {
    const connecting = new pg.Client({ connectionString: url, application_name: 'restfold-listen' });
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
    get channel() {
      return channel;
    },
    async close() {
      closed = true;
      await client?.end();
    },
  };
}

/** Sends `payload` on `channel` (at most 8000 bytes: PostgreSQL's limit), from outside any transaction. */
export async function notify(database: Database, channel: string, payload: string): Promise<void> {
  await database.run('SELECT pg_notify($1, $2)', [channel, payload]);
}
