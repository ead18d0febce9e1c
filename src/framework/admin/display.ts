/**
 * How the admin names records and collections to a person, as Django's `__str__` and `verbose_name`
 * do: a record by its display field (declared, else a name-like field it has, else its key), a
 * collection by its verbose names (declared, else from its name: `articles` → article, articles).
 */
import type { Collection } from '../declare/collection.js';
import type { ModelAdminOptions } from './declare.js';
import { cellText } from './pages/cell.js';

type Row = Readonly<Record<string, unknown>>;

/** A collection and the app's options for it: an admin entry, or a related collection the admin does not show (`{}`). */
export interface Named {
  readonly collection: Collection;
  readonly options: ModelAdminOptions;
}

/** The fields a record is named by when its admin declares no `display`, the first it has with text. */
const NAME_LIKE = ['name', 'title', 'username', 'label', 'slug', 'email'];

/** `articles` → `article`, `categories` → `category`, `boxes` → `box`; a name this misreads declares its own. */
function singular(plural: string): string {
  if (/ies$/.test(plural)) return `${plural.slice(0, -3)}y`;
  if (/(ss|sh|ch|x|z)es$/.test(plural)) return plural.slice(0, -2);
  if (/[^s]s$/.test(plural)) return plural.slice(0, -1);
  return plural;
}

/** Django's verbose_name and verbose_name_plural. */
export function verboseNames({ collection, options }: Named): { readonly one: string; readonly many: string } {
  const many = options.verboseNamePlural ?? collection.name.replaceAll('_', ' ');
  return { one: options.verboseName ?? singular(many), many };
}

/** "1 article", "2 articles". */
export const counted = (named: Named, count: number): string => `${count} ${count === 1 ? verboseNames(named).one : verboseNames(named).many}`;

/**
 * Django's `str(obj)`: the declared display field, else the first name-like field with text, else the
 * record's key. `named` undefined: a record of a collection the admin does not show (by its `id`).
 */
export function displayOf(named: Named | undefined, record: Row): string {
  const text = (name: string | undefined) => (name !== undefined && record[name] !== undefined && record[name] !== null && record[name] !== '' ? name : undefined);
  const field = text(named?.options.display) ?? NAME_LIKE.find((name) => typeof record[name] === 'string' && text(name));
  return cellText(record[field ?? named?.collection.recordKey.field ?? 'id'] ?? record.id);
}

/** A record as messages and confirmations name it: `article “dumplings”`. */
export const labelOf = (named: Named, record: Row): string => `${verboseNames(named).one} “${displayOf(named, record)}”`;
