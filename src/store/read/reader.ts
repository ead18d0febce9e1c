/**
 * A request's reader: the stages of one request ask it for what they read, and it decides how
 * many statements that takes. A stage may announce a record read it will make later; where the
 * database is a round trip away (capabilities.mergesRoundTrips) the next companion query (the
 * credential's user) carries the announced read along, as one statement, and the reader keeps
 * its answer for when the record is asked for. In-process (SQLite) a merged read only costs more:
 * each read is sent when it is asked for. Nothing announced, or a different read asked for, is
 * simply read then. A record asked for within a scope (which is built from the user, so cannot be
 * known before the user is found) is read then, with the scope's conditions; so is one reaching a
 * table the request may not see whole, once the reader knows what the request may see (`restrict`).
 *
 * With read replicas (store/connection/replicas.ts), a reader made for a request that writes nothing reads its
 * records and lists from a replica, once it knows whose request it is (`authenticated`): an
 * anonymous one from any replica in use, a user's from one that has replayed past the user's last
 * write, whose position the credential's query read from the primary alongside (write-positions.ts).
 * The credential's query itself, and the record it carries along, read the primary; so does every
 * statement run on `database` (writes, transactions, the accounts' lookups). A replica that fails
 * to answer is skipped and the read made on the primary.
 */
import type { RecordScope, TableScopes } from '../../core/list-query.js';
import type { Row, Selection } from '../../core/rows.js';
import { storeDatabase, type Database, type ReplicaSet } from '../connection/database.js';
import { findScopedRecord, readList, type ListPlan, type ListRead } from './list.js';
import { findRecord, findRecordAlongside, readCompanion, type Companion, type RecordId } from './records.js';
import { readsScoped, withScopes } from '../conditions/table-scopes.js';
import { currentUserRow, type IssuedCredential, type UserRow } from '../accounts/users.js';
import { conflictsWithRecovery } from '../connection/replicas.js';
import { positionedCompanion, positionIn } from '../connection/write-positions.js';

export interface RequestReader {
  /** The database the request reads and writes through: once scopedTables, carrying what it may see. */
  readonly database: Database;
  /** What the request may see, once its user is known: every later read and write through `database` keeps to it. */
  scopeTo(scopes: TableScopes): void;
  /** A record the request will read (`record`), for the next companion query to carry along where that saves a round trip. */
  announce(selection: Selection, id: RecordId): void;
  /** The companion query's row (undefined: none), with the announced read not yet sent, where reads merge. */
  companion(companion: Companion): Promise<Row | undefined>;
  /**
   * The record (undefined: none, or outside `scope`): the announced read's answer once, when it came
   * along already and no scope is asked for; else read now.
   */
  record(selection: Selection, id: RecordId, scope?: RecordScope): Promise<Row | undefined>;
  /** A page of a list and what the plan asks of its count (readList). */
  list(plan: ListPlan): Promise<ListRead>;
  /** The credential's user (currentUserRow), read on the primary, with the position of their last write where replicas may serve them. */
  currentUser(credential: IssuedCredential): Promise<UserRow | undefined>;
  /** Authentication is over: whether the request has a user. Reads before this go to the primary. */
  authenticated(user: boolean): void;
}

interface RecordRead {
  readonly selection: Selection;
  readonly id: RecordId;
}

const sameRead = (a: RecordRead | undefined, selection: Selection, id: RecordId): boolean => a?.selection === selection && a.id === id;

/** Where the reads go: not yet known (before authentication), the primary, or replicas past a user's last write (null: any). */
type Reading = 'unknown' | 'primary' | { readonly after: bigint | null };

const readRecord = (database: Database, selection: Selection, id: RecordId, scope: RecordScope | undefined): Promise<Row | undefined> =>
  scope ? findScopedRecord(database, selection, id, scope) : findRecord(database, selection, id);

/** One per request: a class, whose methods all requests share. */
class Reader implements RequestReader {
  private announced: RecordRead | undefined;
  private answered: (RecordRead & { readonly row: Row | undefined }) | undefined;
  /** The user's last write's position, once a credential's query read it (null: none). */
  private writtenAt: bigint | null | undefined;
  private reading: Reading = 'unknown';
  /** The replica this request reads from, once picked (undefined: the primary). */
  private replica: Database | undefined;

  /** `replicas`: the primary's, where this request may read from them (it writes nothing). */
  constructor(
    public database: Database,
    private readonly replicas: ReplicaSet | undefined,
  ) {}

  scopeTo(scopes: TableScopes): void {
    this.database = withScopes(this.database, scopes);
  }

  announce(selection: Selection, id: RecordId): void {
    if (storeDatabase(this.database).capabilities.mergesRoundTrips) this.announced = { selection, id };
  }

  // Not async: every authenticated request passes here, and the read's promise needs no wrapper.
  companion(companion: Companion): Promise<Row | undefined> {
    if (this.replicas) return this.positionedCompanion(positionedCompanion(companion));
    return this.alongside(companion);
  }

  /** The companion's row, with the announced read carried along where there is one. */
  private alongside(companion: Companion): Promise<Row | undefined> {
    const read = this.announced;
    if (!read) return readCompanion(this.database, companion);
    this.announced = undefined;
    return findRecordAlongside(this.database, read.selection, read.id, companion).then((found) => {
      if (found) this.answered = { selection: read.selection, id: read.id, row: found.record };
      return found?.companion;
    });
  }

  /**
   * The companion read with its user's write position, kept for choosing a replica. An announced
   * record still rides along, on the primary: inside a statement the primary runs anyway it costs
   * a primary-key lookup, where a replica's read would cost a round trip more (docs/deploying.md).
   */
  private async positionedCompanion(companion: Companion): Promise<Row | undefined> {
    const row = await this.alongside(companion);
    if (row) this.writtenAt = positionIn(row);
    return row;
  }

  currentUser(credential: IssuedCredential): Promise<UserRow | undefined> {
    if (!this.replicas) return currentUserRow(this.database, credential);
    return currentUserRow(this.database, credential, true).then((row) => {
      if (row) this.writtenAt = positionIn(row as unknown as Row);
      return row;
    });
  }

  authenticated(user: boolean): void {
    if (!this.replicas) return;
    // A user whose last write no query told (a kind that did not read through the reader) is read on the primary.
    if (!user) this.reading = { after: null };
    else this.reading = this.writtenAt === undefined ? 'primary' : { after: this.writtenAt };
  }

  record(selection: Selection, id: RecordId, scope?: RecordScope): Promise<Row | undefined> {
    const { answered } = this;
    // An answer read before the request's scopes was known holds only where the record reaches no scoped table.
    const scopedTables = this.database.scopes?.scopedTables;
    if (!scope && sameRead(answered, selection, id) && !(scopedTables && readsScoped(selection, scopedTables))) {
      // Once: a later read in the same request (after a write, say) sees the database as it is then.
      this.answered = undefined;
      return Promise.resolve(answered!.row);
    }
    const replica = this.replicaFor();
    if (replica) return this.onReplica(replica, (database) => readRecord(database, selection, id, scope));
    return readRecord(this.database, selection, id, scope);
  }

  list(plan: ListPlan): Promise<ListRead> {
    const replica = this.replicaFor();
    if (replica) return this.onReplica(replica, (database) => readList(database, plan));
    return readList(this.database, plan);
  }

  /** The replica to read from (picked once per request, so its reads see one server), carrying what the request may see; undefined: the primary. */
  private replicaFor(): Database | undefined {
    const { reading } = this;
    if (typeof reading === 'string') return undefined;
    this.replica ??= this.replicas!.pick(reading.after);
    if (!this.replica) this.reading = 'primary';
    const { scopes } = this.database;
    return this.replica && scopes ? withScopes(this.replica, scopes) : this.replica;
  }

  /**
   * `read` on the replica; made again on the primary where the replica cannot be reached (then
   * skipped until a poll sees it again) or cancelled it for a conflict with what it replays.
   */
  private onReplica<T>(replica: Database, read: (database: Database) => Promise<T>): Promise<T> {
    return read(replica).catch((error: unknown) => {
      const unavailable = replica.isUnavailable(error);
      if (!unavailable && !conflictsWithRecovery(error)) throw error;
      if (unavailable) this.replicas!.failed(this.replica!);
      this.reading = 'primary';
      return read(this.database);
    });
  }
}

/** `readOnly`: the request writes nothing (a GET), so it may read from replicas where the database has them. */
export const requestReader = (database: Database, readOnly = false): RequestReader => new Reader(database, readOnly ? database.replicas : undefined);
