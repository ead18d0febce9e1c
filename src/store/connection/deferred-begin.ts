/**
 * Transactions that begin at their first statement. A transaction whose work sends nothing (a
 * before-hook that only changed values) costs no BEGIN and no COMMIT; `begun` lets the write unit
 * leave such a one and send its write alone, where one statement commits itself.
 */
import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely';

/** A connection whose transaction, once opened, is begun by the first statement sent on it. */
class DeferredBegin implements DatabaseConnection {
  /** The settings of a transaction opened on this connection that has sent nothing yet. */
  private pending: TransactionSettings | undefined;
  /** The BEGIN under way: two statements sent at once begin the transaction once. */
  private beginning: Promise<void> | undefined;

  constructor(
    readonly inner: DatabaseConnection,
    private readonly driver: Driver,
  ) {}

  /** Whether a statement has been sent in the open transaction (or there is none open). */
  get begun(): boolean {
    return this.pending === undefined;
  }

  open(settings: TransactionSettings): void {
    this.pending = settings;
  }

  /** The open transaction begun, if it was not yet. */
  begin(): Promise<void> {
    if (this.pending === undefined) return Promise.resolve();
    const settings = this.pending;
    return (this.beginning ??= this.driver.beginTransaction(this.inner, settings).then(
      () => {
        this.pending = undefined;
        this.beginning = undefined;
      },
      (error: unknown) => {
        this.beginning = undefined;
        throw error;
      },
    ));
  }

  /** Commit or roll back the open transaction: where it never began, there is nothing to send. */
  end(send: (inner: DatabaseConnection) => Promise<void>): Promise<void> {
    if (this.pending === undefined) return send(this.inner);
    this.pending = undefined;
    return Promise.resolve();
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // Not async: outside a transaction, or once it has begun, the driver's own promise is the answer.
    return this.pending === undefined ? this.inner.executeQuery<R>(query) : this.begin().then(() => this.inner.executeQuery<R>(query));
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    await this.begin();
    yield* this.inner.streamQuery<R>(query, chunkSize);
  }
}

function deferringBegin(driver: Driver): Driver {
  const held = (connection: DatabaseConnection) => connection as DeferredBegin;
  type Savepoint = NonNullable<Driver['savepoint']>;
  // A savepoint needs its transaction begun.
  const atSavepoint = (step: Savepoint | undefined): Savepoint | undefined =>
    step && ((connection, name, compile) => held(connection).begin().then(() => step.call(driver, held(connection).inner, name, compile)));
  return {
    init: () => driver.init(),
    acquireConnection: async () => new DeferredBegin(await driver.acquireConnection(), driver),
    beginTransaction: (connection, settings) => Promise.resolve(held(connection).open(settings)),
    commitTransaction: (connection) => held(connection).end((inner) => driver.commitTransaction(inner)),
    rollbackTransaction: (connection) => held(connection).end((inner) => driver.rollbackTransaction(inner)),
    savepoint: atSavepoint(driver.savepoint),
    rollbackToSavepoint: atSavepoint(driver.rollbackToSavepoint),
    releaseSavepoint: atSavepoint(driver.releaseSavepoint),
    releaseConnection: (connection) => driver.releaseConnection(held(connection).inner),
    destroy: () => driver.destroy(),
  };
}

/** `dialect` with its transactions begun at their first statement. */
export function withDeferredBegin(dialect: Dialect): Dialect {
  return {
    createDriver: () => deferringBegin(dialect.createDriver()),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}

/** Whether `connection` (a transaction's, as Kysely hands it) has sent a statement in its transaction. */
export const begunOn = (connection: DatabaseConnection): boolean => (connection as DeferredBegin).begun;
