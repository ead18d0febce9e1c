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
 */
import type { RecordScope, Visibility } from '../core/list-query.js';
import type { Row, Selection } from '../core/rows.js';
import { storeDatabase, type Database } from './database.js';
import { findScopedRecord, readList, type ListPlan, type ListRead } from './list.js';
import { findRecord, findRecordAlongside, readCompanion, type Companion, type RecordId } from './records.js';
import { readsRestricted, restrictedTo } from './visibility.js';

export interface RequestReader {
  /** The database the request reads and writes through: once restricted, carrying what it may see. */
  readonly database: Database;
  /** What the request may see, once its user is known: every later read and write through `database` keeps to it. */
  restrict(visibility: Visibility): void;
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
}

interface RecordRead {
  readonly selection: Selection;
  readonly id: RecordId;
}

const sameRead = (a: RecordRead | undefined, selection: Selection, id: RecordId): boolean => a?.selection === selection && a.id === id;

/** One per request: a class, whose methods all requests share. */
class Reader implements RequestReader {
  private announced: RecordRead | undefined;
  private answered: (RecordRead & { readonly row: Row | undefined }) | undefined;

  constructor(public database: Database) {}

  restrict(visibility: Visibility): void {
    this.database = restrictedTo(this.database, visibility);
  }

  announce(selection: Selection, id: RecordId): void {
    if (storeDatabase(this.database).capabilities.mergesRoundTrips) this.announced = { selection, id };
  }

  // Not async: every authenticated request passes here, and the read's promise needs no wrapper.
  companion(companion: Companion): Promise<Row | undefined> {
    const read = this.announced;
    if (!read) return readCompanion(this.database, companion);
    this.announced = undefined;
    return findRecordAlongside(this.database, read.selection, read.id, companion).then((found) => {
      if (found) this.answered = { selection: read.selection, id: read.id, row: found.record };
      return found?.companion;
    });
  }

  record(selection: Selection, id: RecordId, scope?: RecordScope): Promise<Row | undefined> {
    if (scope) return findScopedRecord(this.database, selection, id, scope);
    const { answered } = this;
    // An answer read before the request's visibility was known holds only where the record reaches no restricted table.
    const restricted = this.database.visibility?.restricted;
    if (!sameRead(answered, selection, id) || (restricted && readsRestricted(selection, restricted))) return findRecord(this.database, selection, id);
    // Once: a later read in the same request (after a write, say) sees the database as it is then.
    this.answered = undefined;
    return Promise.resolve(answered!.row);
  }

  list(plan: ListPlan): Promise<ListRead> {
    return readList(this.database, plan);
  }
}

export const requestReader = (database: Database): RequestReader => new Reader(database);
