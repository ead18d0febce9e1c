/**
 * A named statement run on a pooled pg connection, its result's shape learnt once per connection.
 *
 * pg's own Query asks PostgreSQL to describe the result of every execution and builds a parser and
 * a row template per column of every result it gets. A prepared statement's result type cannot
 * change on the connection that prepared it (PostgreSQL refuses to run it if it would: see
 * isStalePlan), so this query describes a statement the first time it runs on a connection and
 * keeps the column names and parsers for the next runs there. It is a pg Submittable, the driver's
 * extension point for query kinds of its own (pg-cursor and pg-query-stream are others).
 *
 * A connection holds at most STATEMENTS_PER_CONNECTION statements: the least recently run one is
 * closed (the protocol's DEALLOCATE) in the same round trip that prepares a new one, so however
 * many shapes requests make (a PATCH's set of columns is one), a backend's plans stay bounded.
 */
import type pg from 'pg';
import pgUtils from 'pg/lib/utils.js';
import type { Row } from '../core/rows.js';

export type TypeParser = (dataTypeID: number, format: 'text' | 'binary') => (text: string) => unknown;

/** What pg's Connection offers a Submittable: the extended protocol's messages, and the statements prepared on it. */
interface ProtocolConnection {
  readonly stream: { cork(): void; uncork(): void };
  readonly parsedStatements: Record<string, string>;
  readonly submittedNamedStatements: Record<string, string>;
  parse(message: { text: string; name: string }): void;
  bind(message: { statement: string; values: readonly unknown[] }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string }): void;
  close(message: { type: 'S'; name: string }): void;
  sync(): void;
}

interface RowDescription {
  readonly fields: readonly { readonly name: string; readonly dataTypeID: number; readonly format: 'text' | 'binary' }[];
}

/** A result's columns: their names in order, each one's parser, and a row of them all to copy into each row read. */
interface ResultShape {
  /** What the parsers were chosen by: a statement run with another is described again. */
  readonly typeParser: TypeParser;
  readonly names: readonly string[];
  readonly parsers: readonly ((text: string) => unknown)[];
  readonly empty: Row;
}

/** What a statement answers: its rows, and what its command tag says (`UPDATE 3`: the command and the rows it touched). */
export interface StatementResult {
  readonly rows: Row[];
  readonly command: string | null;
  readonly rowCount: number | null;
}

/** A command tag: its command and up to two numbers, the rows being the last (`INSERT 0 1`: after the OID). */
const COMMAND_TAG = /^([A-Za-z]+)(?: (\d+))?(?: (\d+))?/;

/**
 * Named statements one connection holds, reads and writes together: room for a service's hot
 * statements, while shapes requests make up (filters, orderings, a PATCH's columns) cannot make
 * PostgreSQL keep a plan for each of them for the connection's life (docs/performance.md).
 */
export const STATEMENTS_PER_CONNECTION = 200;

/**
 * Per connection: the statements prepared there (or being prepared), least recently run first,
 * each with its result's shape once described. A shape lives exactly as long as its statement.
 */
const preparedByConnection = new WeakMap<ProtocolConnection, Map<string, ResultShape | undefined>>();

/**
 * Whether PostgreSQL refused to run a prepared statement because a table it reads changed the type
 * of its result (a column widened or retyped: `cached plan must not change result type`). It checks
 * this when the statement is bound, before anything runs: prepared again, the statement can run.
 * Told by the routine that raised it, which no translation of the message changes.
 */
export const isStalePlan = (error: unknown): boolean => {
  const { code, routine } = (error ?? {}) as { code?: string; routine?: string };
  return code === '0A000' && routine === 'RevalidateCachedQuery';
};

export class NamedStatement implements pg.Submittable {
  /** Set by pg's client: called once, with the result or the error. */
  callback?: (error: Error | null, result?: StatementResult) => void;
  private prepared?: Map<string, ResultShape | undefined>;
  private protocol?: ProtocolConnection;
  private shape?: ResultShape;
  private readonly rows: Row[] = [];
  private command: string | null = null;
  private rowCount: number | null = null;
  /** A row that could not be parsed: the statement's answer once the server is done with it. */
  private failure?: Error;

  constructor(
    readonly name: string,
    readonly text: string,
    private readonly values: readonly unknown[],
    private readonly typeParser: TypeParser,
  ) {}

  submit(connection: pg.Connection): Error | null {
    const protocol = connection as unknown as ProtocolConnection;
    let values: unknown[];
    try {
      values = this.values.map(pgUtils.prepareValue);
    } catch (error) {
      // Nothing is sent: pg's client answers the error and goes on with its queue.
      return error as Error;
    }
    let prepared = preparedByConnection.get(protocol);
    if (!prepared) preparedByConnection.set(protocol, (prepared = new Map()));
    this.prepared = prepared;
    this.protocol = protocol;
    const { name, text } = this;
    const known = prepared.get(name);
    this.shape = known?.typeParser === this.typeParser ? known : undefined;
    protocol.stream.cork();
    try {
      if (prepared.has(name)) {
        // Now the most recently run.
        prepared.delete(name);
      } else if (prepared.size >= STATEMENTS_PER_CONNECTION) {
        // Closing a statement the server never prepared (its Parse failed) is no error.
        const oldest = prepared.keys().next().value!;
        protocol.close({ type: 'S', name: oldest });
        prepared.delete(oldest);
        delete protocol.parsedStatements[oldest];
      }
      prepared.set(name, known);
      if (protocol.parsedStatements[name] === undefined && protocol.submittedNamedStatements[name] === undefined) {
        protocol.parse({ text, name });
        protocol.submittedNamedStatements[name] = text;
      }
      protocol.bind({ statement: name, values });
      if (!this.shape) protocol.describe({ type: 'P', name: '' });
      protocol.execute({ portal: '' });
      protocol.sync();
    } finally {
      protocol.stream.uncork();
    }
    return null;
  }

  handleRowDescription({ fields }: RowDescription): void {
    this.shape = {
      typeParser: this.typeParser,
      // Defined, not assigned: a column named `__proto__` is a column, not the row's prototype.
      empty: Object.fromEntries(fields.map(({ name }) => [name, null])) as Row,
      names: fields.map(({ name }) => name),
      parsers: fields.map(({ dataTypeID, format }) => this.typeParser(dataTypeID, format)),
    };
    this.prepared!.set(this.name, this.shape);
  }

  handleDataRow({ fields }: { fields: readonly (string | null)[] }): void {
    if (this.failure) return;
    const { names, parsers, empty } = this.shape!;
    const row = { ...empty };
    try {
      for (let index = 0; index < fields.length; index++) {
        const text = fields[index]!;
        // Nulls too: of two columns of one name, the last wins, as in pg's rows.
        row[names[index]!] = text === null ? null : parsers[index]!(text);
      }
    } catch (error) {
      this.failure = error as Error;
      return;
    }
    this.rows.push(row);
  }

  handleError(error: Error): void {
    // A statement whose Parse failed is not on the server: it holds no place among the prepared.
    if (this.protocol?.parsedStatements[this.name] === undefined) this.prepared?.delete(this.name);
    this.callback?.(error);
  }

  handleReadyForQuery(): void {
    try {
      if (this.failure) this.callback?.(this.failure);
      else this.callback?.(null, { rows: this.rows, command: this.command, rowCount: this.rowCount });
    } catch (error) {
      // As pg's Query: a callback that throws must not stop the client before it goes on with its queue.
      process.nextTick(() => {
        throw error;
      });
    }
  }

  handleCommandComplete({ text }: { text: string }): void {
    const tag = COMMAND_TAG.exec(text);
    this.command = tag?.[1] ?? null;
    const rows = tag?.[3] ?? tag?.[2];
    this.rowCount = rows === undefined ? null : Number(rows);
  }

  handleEmptyQuery(): void {}
}

/** Runs a statement on a checked-out client: the promise of its result (pg's client answers a Submittable only by its callback). */
export const runOn = (client: pg.ClientBase, statement: NamedStatement): Promise<StatementResult> =>
  new Promise((resolve, reject) => {
    statement.callback = (error, result) => (error ? reject(error) : resolve(result!));
    client.query(statement);
  });
