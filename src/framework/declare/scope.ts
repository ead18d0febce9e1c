/**
 * A collection's scope: which records a request may reach, as conditions built from the request
 * (DRF's `get_queryset`, PostgREST's row-level security). The store ANDs them into every read and
 * write of the collection, so a record outside them is not found (404), never forbidden (403); and
 * the collection's table is seen within them wherever else a statement reaches it (scopes.ts).
 * A scope may be async (a permission asked of the user); it is evaluated once per request. One that
 * answers anything but conditions fails closed: the request is a 500 naming the collection.
 */
import type { Across, Condition, RecordScope } from '../../core/list-query.js';
import type { Field } from '../../core/fields.js';
import { checkFilter, ConditionError, isPlainObject, parseConditions } from '../../core/conditions.js';
import { isPending, type MaybePromise } from '../../core/maybe-promise.js';
import type { AuthUser } from '../base/auth-user.js';

/** What a request's scope and hooks may look at. */
export interface RequestContext {
  readonly user: AuthUser | null;
  /** The query string's parameters. */
  readonly parameters: ReadonlyMap<string, string>;
  /** The API version the request asked for (the app's `versions`, DRF's `request.version`); undefined when it declares none. */
  readonly version?: string;
}

/**
 * Conditions in the condition language (core/conditions.ts, docs/query-language.md): field or
 * `field__lookup` → value (null alone: is null; an array alone: one of its values), or a list of
 * filters `{ field, lookup, value }` and `storeCondition`s. `{}` and `[]` are no conditions: every record.
 */
export type ScopeConditions = Readonly<Record<string, unknown>> | readonly Condition[];

/**
 * Which records a request may reach: conditions ANDed into every statement of the collection, and row-level
 * security wherever its rows surface (docs/guides/permissions-and-scopes.md).
 */
export type Scope = (context: RequestContext) => ScopeConditions | Promise<ScopeConditions>;

/** Refuses, at start-up, a scope that is no function of the request. */
export function assertScope(name: string, scope: unknown): void {
  if (scope !== undefined && typeof scope !== 'function') {
    throw new Error(`${name}: scope must be a function of the request ({ user, parameters }) answering its conditions, not ${describe(scope)}.`);
  }
}

/** What a value that should have been conditions is, for a message. */
export const describe = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? `an object (${Object.prototype.toString.call(value)})` : typeof value;

/** A scope's answer is not conditions: thrown, so the request fails closed (a 500 whose log names the collection). */
class ScopeRefused extends Error {
  constructor(collection: string, problem: string) {
    super(`${collection}: its scope answered ${problem}; a scope answers conditions (an object of field or field__lookup → value, or a list of filters and storeConditions), so every record of the request was refused.`);
    this.name = 'ScopeRefused';
  }
}

/** Conditions over the collection's fields (the condition language, core/conditions.ts), or `refused(problem)` thrown, the problem naming the key. */
function conditionsOf(fields: Readonly<Record<string, Field>>, answer: unknown, refused: (problem: string) => Error): readonly Condition[] {
  try {
    if (!Array.isArray(answer)) {
      if (!isPlainObject(answer)) throw refused(describe(answer));
      return parseConditions({ fields }, answer, 'code');
    }
    return answer.map((condition: unknown, index): Condition => {
      if (isPlainObject(condition) && typeof condition.storeCondition === 'function') return condition as unknown as Condition;
      if (!isPlainObject(condition) || typeof condition.field !== 'string' || typeof condition.lookup !== 'string' || !('value' in condition)) {
        throw refused(`${describe(condition)} as its condition #${index + 1}`);
      }
      return checkFilter({ fields }, condition as { field: string; lookup: string; value: unknown });
    });
  } catch (error) {
    if (error instanceof ConditionError) throw refused(error.message.replace(/\.$/, ''));
    throw error;
  }
}

/**
 * A collection's `where`, checked at start-up: fixed conditions that narrow what the collection
 * itself serves (as a DRF view's `queryset = Tag.objects.filter(...)`), unlike a scope hiding
 * nothing elsewhere. A declaration that is not conditions refuses to start.
 */
export function whereConditions(collection: string, fields: Readonly<Record<string, Field>>, where: ScopeConditions): readonly Condition[] {
  return conditionsOf(
    fields,
    where,
    (problem) => new Error(`${collection}: where must be conditions (an object of field or field__lookup → value, or a list of filters and storeConditions), not ${problem}.`),
  );
}

/** The request's scope of a collection, narrowed by its `where` (undefined when it has neither). */
export function narrowedBy(scope: RecordScope | undefined, collection: Scoped & { readonly where: readonly Condition[] | undefined }): RecordScope | undefined {
  const { where } = collection;
  if (!where) return scope;
  return { fields: collection.queryRules.fields, conditions: [...(scope?.conditions ?? []), ...where], across: collection.listSource.across };
}

/** What a scope is evaluated for: a collection's name, scope and the fields (and filters across relations) its conditions may name. */
interface Scoped {
  readonly name: string;
  readonly scope: Scope | undefined;
  readonly queryRules: { readonly fields: Readonly<Record<string, Field>> };
  readonly listSource: { readonly across?: Readonly<Record<string, Across>> };
}

/**
 * The collection's scope as this request sees it (undefined when it has none), the scope awaited
 * when it answers later; a scope that throws or answers no conditions fails the request.
 */
export function scopeFor(collection: Scoped, context: RequestContext): MaybePromise<RecordScope | undefined> {
  const { scope } = collection;
  if (!scope) return undefined;
  const { fields } = collection.queryRules;
  const scoped = (answer: unknown): RecordScope => ({ fields, conditions: conditionsOf(fields, answer, (problem) => new ScopeRefused(collection.name, problem)), across: collection.listSource.across });
  const answer = scope(context);
  return isPending(answer) ? Promise.resolve(answer).then(scoped) : scoped(answer);
}
