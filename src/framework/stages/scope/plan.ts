/**
 * Row-level security across tables (PostgreSQL's RLS, PostgREST's embedding): which rows of each
 * table one request may see, wherever a statement reaches them. Each collection is a view of its
 * table: its scope's conditions, a singleton's one record, a nested collection's rows under a
 * parent within the parent collection's view. A row is visible when it lies within at least one
 * view of the collections serving its table (as RLS ORs permissive policies); a table one of
 * whose collections shows it whole is seen whole. A table no collection serves (a join table, the
 * users table in many apps, a model only the app's code writes) shows a row when every row its
 * foreign keys name is visible: a link to a hidden note is hidden, the users table stays whole.
 *
 * What the app declares fixes which tables may be scopedTables (`scopedTables`) and which collections'
 * scopes a request to a collection needs; a request evaluates those scopes once (awaiting any that
 * answer later), and the store keeps every statement it builds over a scoped table within the
 * table's scopes for that request (store/conditions/table-scopes.ts).
 */
import type { Field } from '../../../core/fields.js';
import type { RecordScope, ScopeCondition, TableScopes } from '../../../core/list-query.js';
import { isPending, type MaybePromise } from '../../../core/maybe-promise.js';
import type { Table } from '../../../core/model.js';
import { relatedReads, type Selection } from '../../../core/rows.js';
import type { Collection } from '../../declare/collection.js';
import { scopeFor, type RequestContext } from '../../declare/scope.js';

/** A foreign key of a table no collection serves, naming a scoped table. */
interface Key {
  readonly column: string;
  readonly table: string;
  readonly nullable: boolean;
}

/** What a request to one collection may reach of the scoped tables, and whose scopes that takes. */
interface Reach {
  readonly tables: ReadonlySet<string>;
  readonly collections: readonly Collection[];
}

/** What the app's declarations fix: the scoped tables, and what a request to each collection resolves. */
export interface ScopePlan {
  /** The tables some request may not see whole (every other one is seen whole). */
  readonly scopedTables: ReadonlySet<string>;
  readonly collections: ReadonlyMap<string, Collection>;
  /** Each scoped table's collections (none: no collection serves it). */
  readonly serving: ReadonlyMap<string, readonly Collection[]>;
  /** Each scoped table no collection serves: its foreign keys to scoped tables, and its fields. */
  readonly keys: ReadonlyMap<string, { readonly fields: Readonly<Record<string, Field>>; readonly keys: readonly Key[] }>;
  readonly reach: ReadonlyMap<string, Reach>;
}

const parentOf = (collections: ReadonlyMap<string, Collection>, collection: Collection): Collection | undefined =>
  collection.parent && (collections.get(collection.parent.collection.name) ?? collection.parent.collection);

/** The tables a selection reads beside its own: joins, aggregates, batches and their join tables. */
function selectionTables(selection: Selection, into: Set<string>): void {
  for (const { table } of relatedReads(selection)) into.add(table);
  for (const batch of selection.batches ?? []) {
    into.add(batch.table);
    if (batch.through) into.add(batch.through.table);
    selectionTables(batch.selection, into);
  }
}

/** Every table a request to `collection` may read or check besides its own rows: what its serializers read and write, its filters across relations, its foreign keys. */
function tablesReached(collection: Collection): Set<string> {
  const reached = new Set<string>();
  for (const serializer of collection.serializers) {
    selectionTables(serializer.selection, reached);
    for (const relation of Object.values(serializer.relations)) {
      for (const table of [relation.through?.table, relation.through?.target, relation.slug?.target.table, relation.slugs?.target.table]) if (table) reached.add(table);
    }
  }
  for (const across of Object.values(collection.listSource.across ?? {})) {
    reached.add(across.table);
    if (across.named) reached.add(across.named.table);
  }
  for (const field of Object.values(collection.serializer.model.fields)) if (field.references) reached.add(field.references);
  return reached;
}

/** The plan for the app's collections (as served: their named filters resolved) over its tables. */
export function scopePlan(served: readonly Collection[], tables: ReadonlyMap<string, Table>): ScopePlan {
  const collections = new Map(served.map((collection) => [collection.name, collection]));
  const byTable = new Map<string, Collection[]>();
  for (const collection of served) {
    const { table } = collection.serializer.model;
    byTable.set(table, [...(byTable.get(table) ?? []), collection]);
  }
  const whole = (collection: Collection): boolean => {
    const parent = parentOf(collections, collection);
    return !collection.scope && !collection.singleton && (!parent || whole(parent));
  };
  const scopedTables = new Set([...byTable].filter(([, serving]) => !serving.some(whole)).map(([table]) => table));
  // A table no collection serves is scopedTables once a foreign key of its names a scoped table; until none is added.
  const unserved = [...tables.values()].filter((table) => !byTable.has(table.table));
  const keysOf = (table: Table): Key[] =>
    Object.entries(table.fields).flatMap(([column, field]) => (field.references && scopedTables.has(field.references) ? [{ column, table: field.references, nullable: field.nullable }] : []));
  for (let added = true; added; ) {
    added = false;
    for (const table of unserved) {
      if (!scopedTables.has(table.table) && keysOf(table).length > 0) {
        scopedTables.add(table.table);
        added = true;
      }
    }
  }
  const keys = new Map(unserved.filter((table) => scopedTables.has(table.table)).map((table) => [table.table, { fields: table.fields, keys: keysOf(table) }]));
  const serving = new Map([...byTable].filter(([table]) => scopedTables.has(table)));
  const reach = new Map<string, Reach>();
  for (const collection of served) {
    const needed = new Set<Collection>([collection]);
    const parent = parentOf(collections, collection);
    if (parent) needed.add(parent);
    const resolved = new Set<string>();
    const visit = (table: string): void => {
      if (!scopedTables.has(table) || resolved.has(table)) return;
      resolved.add(table);
      for (const key of keys.get(table)?.keys ?? []) visit(key.table);
      for (const server of serving.get(table) ?? []) {
        for (let chained: Collection | undefined = server; chained; chained = parentOf(collections, chained)) {
          needed.add(chained);
          visitAcross(chained);
        }
      }
    };
    // A scope may filter across relations: their tables are reached when it is applied.
    const visitAcross = (scoped: Collection): void => {
      for (const across of Object.values(scoped.listSource.across ?? {})) [across.table, across.named?.table].forEach((name) => name && visit(name));
    };
    for (const table of tablesReached(collection)) visit(table);
    if (parent) visitAcross(parent);
    reach.set(collection.name, { tables: resolved, collections: [...needed] });
  }
  return { scopedTables, collections, serving, keys, reach };
}

/** What one request sees: the scopes of the collections it needs (evaluated once), their views, and the tableScopes the store keeps to. */
export interface RequestViews {
  /** A collection's own scope for the request (undefined: none); asked only of the request's collection and its parent. */
  scopeOf(collection: Collection): RecordScope | undefined;
  /** Handed to the request's reader where the app has scoped tables. */
  readonly tableScopes: TableScopes | undefined;
}

const UNSCOPED: RequestViews = { scopeOf: () => undefined, tableScopes: undefined };

class Views implements RequestViews, TableScopes {
  readonly scopedTables: ReadonlySet<string>;
  private readonly views = new Map<string, RecordScope | undefined>();
  private readonly tables = new Map<string, readonly RecordScope[] | undefined>();
  /** Tables whose tableScopes is being worked out: a foreign key back to one of them adds nothing (a cycle). */
  private readonly working = new Set<string>();

  constructor(
    private readonly plan: ScopePlan,
    private readonly collection: string,
    private readonly reach: Reach,
    private readonly scopes: ReadonlyMap<string, RecordScope | undefined>,
    private readonly context: RequestContext,
  ) {
    this.scopedTables = plan.scopedTables;
  }

  get tableScopes(): TableScopes | undefined {
    return this.scopedTables.size > 0 ? this : undefined;
  }

  scopeOf(collection: Collection): RecordScope | undefined {
    return this.resolved(collection.name);
  }

  private resolved(name: string): RecordScope | undefined {
    if (!this.scopes.has(name)) throw new Error(`${this.collection}: the scope of ${name} was not resolved for this request.`);
    return this.scopes.get(name);
  }

  /** A collection's view for this request: undefined where it shows its whole table. */
  private view(collection: Collection): RecordScope | undefined {
    if (this.views.has(collection.name)) return this.views.get(collection.name);
    const conditions: ScopeCondition[] = [...(this.resolved(collection.name)?.conditions ?? [])];
    if (collection.singleton) {
      const id = collection.singleton(this.context);
      conditions.push(id === undefined || id === null ? { field: 'id', lookup: 'isnull', value: true } : { field: 'id', lookup: 'exact', value: id });
    }
    const parent = parentOf(this.plan.collections, collection);
    const parentView = parent && this.view(parent);
    if (parent && parentView) {
      const { field } = collection.parent!;
      conditions.push({ reference: { column: field, table: parent.serializer.model.table, within: [parentView], nullable: collection.serializer.model.fields[field]!.nullable } });
    }
    const shown = !collection.scope && !collection.singleton && !parentView ? undefined : { fields: collection.queryRules.fields, conditions, across: collection.listSource.across };
    this.views.set(collection.name, shown);
    return shown;
  }

  scopesOf(table: string): readonly RecordScope[] | undefined {
    if (!this.scopedTables.has(table)) return undefined;
    if (this.tables.has(table)) return this.tables.get(table);
    // Fail closed: a statement over a scoped table this request did not resolve is refused, never read whole.
    if (!this.reach.tables.has(table)) throw new Error(`${this.collection}: a statement reached the scoped table ${table}, which this request did not resolve.`);
    this.working.add(table);
    let within: readonly RecordScope[] | undefined;
    const serving = this.plan.serving.get(table);
    if (serving) {
      const views = serving.map((collection) => this.view(collection));
      within = views.includes(undefined) ? undefined : (views as RecordScope[]);
    } else {
      const { fields, keys } = this.plan.keys.get(table)!;
      const conditions = keys
        .filter((key) => !this.working.has(key.table))
        .map((key): ScopeCondition => ({ reference: { column: key.column, table: key.table, within: this.scopesOf(key.table)!, nullable: key.nullable } }));
      within = [{ fields, conditions }];
    }
    this.working.delete(table);
    this.tables.set(table, within);
    return within;
  }
}

/**
 * The request's views: the scopes of the collections it needs, each evaluated once (awaited where
 * one answers later). At once, with nothing built, for a collection that needs no scope at all.
 */
export function requestViews(plan: ScopePlan, collection: Collection, context: RequestContext): MaybePromise<RequestViews> {
  const reach = plan.reach.get(collection.name)!;
  if (plan.scopedTables.size === 0 && reach.collections.every((needed) => !needed.scope)) return UNSCOPED;
  const scopes = new Map<string, RecordScope | undefined>();
  const pending: Promise<void>[] = [];
  for (const needed of reach.collections) {
    const scope = scopeFor(needed, context);
    if (isPending(scope)) pending.push(scope.then((resolved) => void scopes.set(needed.name, resolved)));
    else scopes.set(needed.name, scope);
  }
  const views = () => new Views(plan, collection.name, reach, scopes, context);
  return pending.length > 0 ? Promise.all(pending).then(views) : views();
}
