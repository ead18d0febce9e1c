/**
 * Statements run on a pooled pg connection that read their results by a shape learnt once: named
 * ones, prepared once per connection, and unnamed ones, for a connection a transaction pooler may
 * hand to another client between two statements.
 *
 * pg's own Query asks PostgreSQL to describe the result of every execution and builds a parser and
 * a row template per column of every result it gets. A prepared statement's result type cannot
 * change on the connection that prepared it (PostgreSQL refuses to run it if it would: see
 * isStalePlan), so NamedStatement describes a statement the first time it runs on a connection and
 * keeps the column names and parsers for the next runs there. UnnamedStatement has every run
 * described, and takes the process's shape for its text only when the description is the very
 * one that shape was built from. Both are pg Submittables, the driver's extension point for query
 * kinds of its own (pg-cursor and pg-query-stream are others).
 *
 * A connection holds at most STATEMENTS_PER_CONNECTION named statements: the least recently run one
 * is closed (the protocol's DEALLOCATE) in the same round trip that prepares a new one, so however
 * many shapes requests make (a PATCH's set of columns is one), a backend's plans stay bounded.
 *
 * Named statements also run behind a transaction pooler that carries them from one server
 * connection to the next (PgBouncer 1.21+, max_prepared_statements): it prepares each text once per
 * server connection under a name of its own, answers Close itself and bounds a server connection's
 * statements by its own count (docs/databases.md).
 */
import type pg from 'pg';
import pgUtils from 'pg/lib/utils.js';
import { cached } from '../../../core/cache.js';
import type { Row } from '../../../core/rows.js';

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

type Field = { readonly name: string; readonly dataTypeID: number; readonly format: 'text' | 'binary' };

interface RowDescription {
  readonly fields: readonly Field[];
}

/** A result's columns: their names in order, each one's parser, and a row of them all to copy into each row read. */
interface ResultShape {
  /** What the parsers were chosen by: a statement run with another is described again. */
  readonly typeParser: TypeParser;
  /** The description it was built from. */
  readonly fields: readonly Field[];
  readonly names: readonly string[];
  readonly parsers: readonly ((text: string) => unknown)[];
  readonly empty: Row;
}

const resultShapeOf = (fields: readonly Field[], typeParser: TypeParser): ResultShape => ({
  typeParser,
  fields,
  // Defined, not assigned: a column named `__proto__` is a column, not the row's prototype.
  empty: Object.fromEntries(fields.map(({ name }) => [name, null])) as Row,
  names: fields.map(({ name }) => name),
  parsers: fields.map(({ dataTypeID, format }) => typeParser(dataTypeID, format)),
});

/** Whether `shape` reads rows described by `fields` with `typeParser`: the same columns, names, types and formats, in order. */
function describes(shape: ResultShape, fields: readonly Field[], typeParser: TypeParser): boolean {
  if (shape.typeParser !== typeParser || shape.fields.length !== fields.length) return false;
  for (let index = 0; index < fields.length; index++) {
    const known = shape.fields[index]!;
    const field = fields[index]!;
    if (known.name !== field.name || known.dataTypeID !== field.dataTypeID || known.format !== field.format) return false;
  }
  return true;
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

/** The messages `prepare` sends, then Execute and Sync, in one write to the socket: one round trip. */
function inOneWrite(protocol: ProtocolConnection, prepare: () => void): void {
  protocol.stream.cork();
  try {
    prepare();
    protocol.execute({ portal: '' });
    protocol.sync();
  } finally {
    protocol.stream.uncork();
  }
}

/** What both kinds share: values sent as pg sends them, rows read by the shape described, one answer at the end. */
abstract class ShapedStatement implements pg.Submittable {
  /** Set by pg's client: called once, with the result or the error. */
  callback?: (error: Error | null, result?: StatementResult) => void;
  protected shape?: ResultShape;
  private readonly rows: Row[] = [];
  private command: string | null = null;
  private rowCount: number | null = null;
  /** A row that could not be parsed: the statement's answer once the server is done with it. */
  private failure?: Error;

  constructor(
    readonly text: string,
    private readonly values: readonly unknown[],
    protected readonly typeParser: TypeParser,
  ) {}

  abstract submit(connection: pg.Connection): Error | null;
  abstract handleRowDescription(description: RowDescription): void;

  /** The values as the protocol carries them, or why one cannot be sent (then nothing is: pg's client answers the error and goes on with its queue). */
  protected boundValues(): unknown[] | Error {
    try {
      return this.values.map(pgUtils.prepareValue);
    } catch (error) {
      return error as Error;
    }
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

export class NamedStatement extends ShapedStatement {
  private prepared?: Map<string, ResultShape | undefined>;
  private protocol?: ProtocolConnection;

  constructor(
    readonly name: string,
    text: string,
    values: readonly unknown[],
    typeParser: TypeParser,
  ) {
    super(text, values, typeParser);
  }

  submit(connection: pg.Connection): Error | null {
    const protocol = connection as unknown as ProtocolConnection;
    const values = this.boundValues();
    if (values instanceof Error) return values;
    let prepared = preparedByConnection.get(protocol);
    if (!prepared) preparedByConnection.set(protocol, (prepared = new Map()));
    this.prepared = prepared;
    this.protocol = protocol;
    const { name, text } = this;
    const known = prepared.get(name);
    this.shape = known?.typeParser === this.typeParser ? known : undefined;
    inOneWrite(protocol, () => {
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
        // Closed first: a pooler that carries named statements (PgBouncer's max_prepared_statements)
        // keeps a name whose Parse the server refused, and drops a client that parses it again.
        protocol.close({ type: 'S', name });
        // The name in the text: such a pooler shares statements between its clients by their text,
        // so one renamed after a stale plan (isStalePlan) must differ from the stale one to be prepared afresh.
        protocol.parse({ text: `${text}\n-- ${name}`, name });
        protocol.submittedNamedStatements[name] = text;
      }
      protocol.bind({ statement: name, values });
      if (!this.shape) protocol.describe({ type: 'P', name: '' });
    });
    return null;
  }

  handleRowDescription({ fields }: RowDescription): void {
    this.shape = resultShapeOf(fields, this.typeParser);
    this.prepared!.set(this.name, this.shape);
  }

  override handleError(error: Error): void {
    // A statement whose Parse failed is not on the server: it holds no place among the prepared.
    if (this.protocol?.parsedStatements[this.name] === undefined) this.prepared?.delete(this.name);
    super.handleError(error);
  }
}

/**
 * Result shapes of unnamed statements, by text, shared by every connection: texts are the
 * service's query shapes, and a PATCH's column sets are many, hence the bound.
 */
const UNNAMED_SHAPES = 1_000;
const unnamedShapes = new Map<string, ResultShape>();

/**
 * A statement sent unnamed: parsed, bound, described and run in one round trip each time, which a
 * transaction pooler keeps on one server connection. Nothing of it outlives the round trip on
 * the server, so its result type may differ from one run to the next (a migration in between):
 * every run is described, and rows are read with the process's shape for its text only when the
 * description matches that shape's exactly; otherwise by a new shape, which replaces it.
 */
export class UnnamedStatement extends ShapedStatement {
  submit(connection: pg.Connection): Error | null {
    const protocol = connection as unknown as ProtocolConnection;
    const values = this.boundValues();
    if (values instanceof Error) return values;
    inOneWrite(protocol, () => {
      protocol.parse({ text: this.text, name: '' });
      protocol.bind({ statement: '', values });
      protocol.describe({ type: 'P', name: '' });
    });
    return null;
  }

  handleRowDescription({ fields }: RowDescription): void {
    const { text, typeParser } = this;
    let shape = cached(unnamedShapes, text, UNNAMED_SHAPES, () => resultShapeOf(fields, typeParser));
    if (!describes(shape, fields, typeParser)) unnamedShapes.set(text, (shape = resultShapeOf(fields, typeParser)));
    this.shape = shape;
  }
}

/** Runs a statement on a checked-out client: the promise of its result (pg's client answers a Submittable only by its callback). */
export const runOn = (client: pg.ClientBase, statement: NamedStatement | UnnamedStatement): Promise<StatementResult> =>
  new Promise((resolve, reject) => {
    statement.callback = (error, result) => (error ? reject(error) : resolve(result!));
    client.query(statement);
  });
