/**
 * PostgreSQL read replicas beside the primary (DATABASE_REPLICA_URLS): what a request reads outside
 * a write may be read from a replica that is in use, which the poll below decides. Every
 * `pollMillis`, on one connection per server (never per request), the primary's WAL
 * position is sampled, and each replica's replayed position read: a replica is as fresh as the
 * latest sample it has replayed past, and its lag is how long ago that sample was taken. Measured
 * so, by positions and this process's clock alone, the lag is neither fooled by an idle primary
 * (no new commits: a replica that replayed everything lags 0) nor by clocks that differ. A replica
 * lagging more than `maxLagMillis`, unreachable, or no longer a standby is skipped: the primary
 * serves its reads until a poll sees it fresh again. The replicas' positions also decide
 * read-your-writes (store/connection/write-positions.ts): a replica serves a user only once it has replayed
 * past the user's last write.
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { openStoreDatabase, type Database, type DatabaseOptions, type ReplicaSet, type ReplicaStatus, type StoreDatabase } from './database.js';
import { createWritePositions, noteWritePosition, walPosition } from './write-positions.js';

export interface ReplicaOptions extends DatabaseOptions {
  /** A replica seen further behind than this is skipped (DATABASE_REPLICA_MAX_LAG_MS). */
  readonly maxLagMillis: number;
  /** How often the positions are read (DATABASE_REPLICA_POLL_MS). */
  readonly pollMillis: number;
}

/** One connection to a server, for the poll alone: opened when needed, dropped on any error. */
class Probe {
  private client: pg.Client | undefined;

  constructor(
    private readonly url: string,
    private readonly timeoutMillis: number,
  ) {}

  async value(text: string): Promise<string | null> {
    if (!this.client) {
      const client = new pg.Client({ connectionString: this.url, application_name: 'restfold-replica-poll', connectionTimeoutMillis: this.timeoutMillis, query_timeout: this.timeoutMillis });
      client.on('error', () => {});
      this.client = client;
      try {
        await client.connect();
      } catch (error) {
        this.close();
        throw error;
      }
    }
    try {
      const { rows } = await this.client.query<{ value: string | null }>(text);
      return rows[0]?.value ?? null;
    } catch (error) {
      this.close();
      throw error;
    }
  }

  close(): void {
    void this.client?.end().catch(() => {});
    this.client = undefined;
  }
}

/**
 * A standby cancels a query whose rows the WAL it replays removes (a recovery conflict, with
 * hot_standby_feedback off): SQLSTATE 40001, or 40P01 for a buffer pin deadlock. Nothing the query
 * asked was wrong: it is asked of the primary instead.
 */
export const conflictsWithRecovery = (error: unknown): boolean => {
  const { code } = (error ?? {}) as { code?: string };
  return code === '40001' || code === '40P01';
};

interface Replica {
  readonly name: string;
  readonly database: StoreDatabase;
  readonly probe: Probe;
  /** The position it had replayed at its last poll. */
  replayed: bigint;
  /** When (this process's clock) the primary was at a position it has replayed; -Infinity: not yet seen. */
  freshAsOf: number;
  /** Whether its last poll answered (and no read on it has failed since). */
  reachable: boolean;
  standby: boolean;
}

interface Sample {
  readonly position: bigint;
  readonly at: number;
}

/** A URL's servers and database, without its credentials or parameters, to name a replica in /readyz and metrics. */
const nameOf = (url: string): string => {
  const [, authority = '', path = ''] = /^[a-z]+:\/\/([^/?#]*)([^?#]*)/i.exec(url) ?? [];
  return `${authority.slice(authority.lastIndexOf('@') + 1)}${path}`;
};

/**
 * `primary`, with `replicaUrls` beside it (`replicas`): every replica a pool of
 * the same size. Resolves once the write-positions table exists and a first poll has run, so the
 * replicas serve from the first request; closing the primary closes them and ends the poll. A
 * replica serves only once it has replayed what the primary had written by then: opened after the
 * migrations, no read meets a table or column the replica has not made yet.
 */
export async function withReplicas(primary: Database, replicaUrls: readonly string[], options: ReplicaOptions): Promise<Database> {
  const replicas: Replica[] = replicaUrls.map((replicaUrl) => ({
    name: nameOf(replicaUrl),
    database: openStoreDatabase(replicaUrl, options),
    probe: new Probe(replicaUrl, Math.max(options.pollMillis, 1000)),
    replayed: 0n,
    freshAsOf: -Infinity,
    reachable: false,
    standby: true,
  }));
  /** The primary's positions over the last maxLag (and a poll or two more), oldest first. */
  const samples: Sample[] = [];
  const lagOf = (replica: Replica): number => performance.now() - replica.freshAsOf;
  /** The primary's position at the first poll: replicas serve once past it. */
  let floor = -1n;
  const inUse = (replica: Replica): boolean => replica.reachable && replica.standby && replica.replayed >= floor && lagOf(replica) <= options.maxLagMillis;

  async function poll(): Promise<void> {
    const at = performance.now();
    // On the primary's pool, which follows it through a failover (a connection of its own would not).
    const position = await primary.run('select pg_current_wal_lsn()::text as position', []).then(([row]) => row?.position as string, () => undefined);
    if (position) samples.push({ position: walPosition(position), at });
    while (samples.length > 1 && samples[0]!.at < at - options.maxLagMillis - 2 * options.pollMillis) samples.shift();
    await Promise.all(
      replicas.map(async (replica) => {
        let replayed: string | null;
        try {
          replayed = await replica.probe.value('select pg_last_wal_replay_lsn()::text as value');
        } catch {
          replica.reachable = false;
          return;
        }
        replica.reachable = true;
        // A server out of recovery (failed over to) replays nothing: its writes are not the primary's.
        replica.standby = replayed !== null;
        if (replayed === null) return;
        replica.replayed = walPosition(replayed);
        const caughtUp = samples.findLast((sample) => sample.position <= replica.replayed);
        if (caughtUp && caughtUp.at > replica.freshAsOf) replica.freshAsOf = caughtUp.at;
      }),
    );
  }

  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const schedule = (): void => {
    if (closed) return;
    timer = setTimeout(() => void poll().finally(schedule), options.pollMillis);
    timer.unref();
  };
  await createWritePositions(primary);
  await poll();
  floor = samples.at(-1)?.position ?? floor;
  schedule();

  let next = 0;
  const set: ReplicaSet = {
    pick(position) {
      for (let tried = 0; tried < replicas.length; tried++) {
        const replica = replicas[(next + tried) % replicas.length]!;
        if (inUse(replica) && (position === null || replica.replayed >= position)) {
          next = (next + tried + 1) % replicas.length;
          return replica.database;
        }
      }
      return undefined;
    },
    failed(database) {
      const replica = replicas.find((candidate) => candidate.database === database);
      if (replica) replica.reachable = false;
    },
    noteWrite: (userId) => noteWritePosition(primary, userId),
    status: (): ReplicaStatus[] =>
      replicas.map((replica) => {
        const lag = lagOf(replica);
        const state = !replica.reachable ? 'unreachable' : !replica.standby ? 'not a standby' : inUse(replica) ? 'in use' : 'lagging';
        return { name: replica.name, state, lagMillis: Number.isFinite(lag) ? Math.round(lag) : null };
      }),
  };
  return {
    ...primary,
    replicas: set,
    async close() {
      closed = true;
      clearTimeout(timer);
      for (const replica of replicas) replica.probe.close();
      await Promise.all([primary.close(), ...replicas.map((replica) => replica.database.close())]);
    },
  };
}
