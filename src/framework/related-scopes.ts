/**
 * Scopes in nested reads: a record nested in another (a forward foreign key shown nested) or
 * counted, tested or listed by a SQL-backed computed field belongs to the collection that serves
 * its table, and the request sees it only within that collection's scope. Outside it, a nested
 * record renders as null and an aggregate leaves it out, as though it did not exist: the record
 * itself answers 404. The conditions go into the page's own statement (the join's ON, the
 * aggregate's WHERE, a nested list's statement), so a list stays a fixed number of statements.
 */
import type { Across, RecordScope } from '../core/list-query.js';
import { relatedReads, type Selection } from '../core/rows.js';
import type { Collection } from './collection.js';
import { scopeFor, type RequestContext } from './scope.js';

/**
 * Table → the collections serving it, for the tables every one of whose collections is scoped: a
 * related row is shown within one of their scopes at least (what the request could reach through
 * one of them). A table served by an unscoped collection, or by none, is read whole.
 */
export type RelatedScopes = ReadonlyMap<string, readonly Collection[]>;

export function relatedScopes(collections: readonly Collection[]): RelatedScopes {
  const byTable = new Map<string, Collection[]>();
  for (const collection of collections) {
    const { table } = collection.serializer.model;
    byTable.set(table, [...(byTable.get(table) ?? []), collection]);
  }
  return new Map([...byTable].filter(([, serving]) => serving.every((collection) => collection.scope !== undefined)));
}

/** Whether a read of this selection depends on the request through the scopes of its related tables. */
export const readsScoped = (selection: Selection, scopes: RelatedScopes): boolean =>
  scopes.size > 0 &&
  (relatedReads(selection).some(({ table }) => scopes.has(table)) ||
    (selection.batches ?? []).some((batch) => scopes.has(batch.table) || readsScoped(batch.selection, scopes)));

const unscoped: ScopedReads = { selection: (selection) => selection, across: (across) => across };

/** What a request reads of related tables, kept within their collections' scopes. */
export interface ScopedReads {
  /** A selection with its nested records and aggregates over scoped tables kept within the scopes (the same selection, and its compiled queries, where none is scoped). */
  selection(selection: Selection): Selection;
  /** A list's filters across related tables (named filters, filters through relations): a related row outside the scopes matches none. */
  across(across: Readonly<Record<string, Across>> | undefined): Readonly<Record<string, Across>> | undefined;
}

export function scopeRelated(scopes: RelatedScopes, context: RequestContext): ScopedReads {
  // Nothing scoped: no per-request memo to build.
  if (scopes.size === 0) return unscoped;
  const withinByTable = new Map<string, RecordScope[]>();
  const within = (table: string): RecordScope[] | undefined => {
    const serving = scopes.get(table);
    if (!serving) return undefined;
    let found = withinByTable.get(table);
    if (!found) {
      found = serving.map((collection) => scopeFor(collection.scope, collection.queryRules.fields, context)!);
      withinByTable.set(table, found);
    }
    return found;
  };
  const scoped = <T extends { readonly table: string }>(read: T): T => {
    const scopesOfTable = within(read.table);
    return scopesOfTable ? { ...read, within: scopesOfTable } : read;
  };
  const scopedSelection = (selection: Selection): Selection =>
    readsScoped(selection, scopes)
      ? {
          ...selection,
          joins: selection.joins.map((join) => scoped({ ...join, ...(join.aggregates && { aggregates: join.aggregates.map(scoped) }) })),
          ...(selection.aggregates && { aggregates: selection.aggregates.map(scoped) }),
          // Nested lists are kept within the scopes too, and what they nest in turn.
          ...(selection.batches && { batches: selection.batches.map((batch) => scoped({ ...batch, selection: scopedSelection(batch.selection) })) }),
        }
      : selection;
  const scopedAcross = (related: Across): Across => scoped(related.named ? { ...related, named: scoped(related.named) } : related);
  return {
    selection: scopedSelection,
    across: (across) => across && Object.fromEntries(Object.entries(across).map(([name, related]) => [name, scopedAcross(related)])),
  };
}
