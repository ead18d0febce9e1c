/**
 * Tables and models. A table is a name, fields and table-level facts (indexes, unique-together, a
 * primary key); a model is a table whose records have an `id` (an integer, or a UUID made on
 * create), with the rules the layers above keep. Together they are the schema: migrations are generated from them (store/schema/).
 */
import type { Field } from './fields.js';
import { assertConstraints } from './constraints.js';
import { indexName, indexState, type IndexFacts, type IndexState, type RowCondition, type TableFacts, type TableState } from './schema.js';

export interface Table {
  readonly table: string;
  readonly fields: Readonly<Record<string, Field>>;
  readonly facts: TableFacts;
}

/**
 * `Rules` are what the layers above keep with a model (the framework's permissions and update
 * rules); the store reads only its table and fields.
 */
export interface Model<Rules = unknown> extends Table {
  readonly rules?: Rules;
}

/** What the core reads of a model's rules: columns read with every record, named like fields. */
export interface ReadColumns {
  readonly reads?: readonly string[];
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** A table that is not a collection's (a session's, a token's): any primary key. */
export function table(name: string, fields: Record<string, Field>, facts: TableFacts = {}, reads: readonly string[] = []): Table {
  const indexed = [...(facts.indexes ?? []).flatMap((index) => index.columns), ...(facts.uniqueTogether ?? []).flat(), ...(facts.primaryKey ?? [])];
  // Names become SQL identifiers; only plain lower-case names are allowed, checked once here.
  for (const identifier of [name, ...Object.keys(fields), ...reads, ...indexed.map((column) => column.replace(/ desc$/, ''))]) {
    if (!IDENTIFIER.test(identifier)) throw new Error(`"${identifier}" is not a valid table or field name (use [a-z0-9_]).`);
  }
  for (const column of indexed) {
    if (!fields[column.replace(/ desc$/, '')]) throw new Error(`${name}: an index or key names "${column}", which is no field.`);
  }
  assertConstraints(name, Object.fromEntries(Object.entries(fields).map(([column, field]) => [column, field.column])), facts.constraints ?? []);
  if (!fields.id && !facts.primaryKey) throw new Error(`Table "${name}" needs an "id" field (fields.id()) or a primaryKey.`);
  return { table: name, fields, facts };
}

export function model<Rules extends ReadColumns & TableFacts>(name: string, fields: Record<string, Field>, rules?: Rules): Model<Rules> {
  if (!fields.id) throw new Error(`Model "${name}" needs an "id" field (fields.id()).`);
  if (fields.id.kind === 'uuid' && !fields.id.default) throw new Error(`Model "${name}": a UUID "id" is made on create: declare it fields.uuid({ primaryKey: true }).`);
  const { indexes, uniqueTogether, constraints } = rules ?? {};
  return { ...table(name, fields, { indexes, uniqueTogether, constraints }, rules?.reads), rules };
}

/** The table as a schema state records it. */
export function tableState({ fields, facts }: Table): TableState {
  const checks = (facts.constraints ?? []).flatMap((constraint): [string, RowCondition][] => ('check' in constraint ? [[constraint.name, constraint.check]] : []));
  return {
    columns: Object.fromEntries(Object.entries(fields).map(([name, field]) => [name, field.column])),
    primaryKey: [...(facts.primaryKey ?? ['id'])],
    ...(checks.length > 0 && { checks: Object.fromEntries(checks) }),
  };
}

/**
 * The indexes the table declares, by name: its own, its unique-together sets, one per foreign key
 * (as Django makes), and one per unique constraint (partial where it has a condition).
 */
export function tableIndexes({ table: name, fields, facts }: Table): Record<string, IndexState> {
  const leadingKey = (facts.primaryKey ?? ['id'])[0];
  const foreignKeys: IndexFacts[] = Object.entries(fields)
    .filter(([column, field]) => field.column.references && column !== leadingKey)
    .map(([column]) => ({ columns: [column] }));
  const together: IndexFacts[] = (facts.uniqueTogether ?? []).map((columns) => ({ columns, unique: true }));
  const constrained = (facts.constraints ?? []).flatMap((constraint): [string, IndexState][] =>
    'unique' in constraint
      ? [[constraint.name, { table: name, columns: [...constraint.unique], unique: true, ...(constraint.condition && { where: constraint.condition }) }]]
      : [],
  );
  return Object.fromEntries([...[...foreignKeys, ...(facts.indexes ?? []), ...together].map((index) => [indexName(name, index), indexState(name, index)]), ...constrained]);
}
