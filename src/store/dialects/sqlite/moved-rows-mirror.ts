/** SQLite's rows moved to another table while the former still serves (see `SqlTypes.movedRows`). */
import { sql } from 'kysely';
import type { RowsMove } from '../capabilities.js';

const quoted = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** The triggers on `from` that copy each write to `to`; a write comes back from `to`'s as nothing to do. */
function copyTriggers(from: string, to: string, key: readonly string[]): string[] {
  const columns = key.map(quoted).join(', ');
  const matches = (row: 'OLD' | 'NEW') => key.map((column) => `${quoted(column)} = ${row}.${quoted(column)}`).join(' AND ');
  const insert = `INSERT INTO ${quoted(to)} (${columns}) SELECT ${key.map((column) => `NEW.${quoted(column)}`).join(', ')} WHERE NOT EXISTS (SELECT 1 FROM ${quoted(to)} WHERE ${matches('NEW')});`;
  const remove = `DELETE FROM ${quoted(to)} WHERE ${matches('OLD')};`;
  const trigger = (event: string, body: string) => `CREATE TRIGGER ${quoted(`${from}_to_${to}_${event.toLowerCase()}`)} AFTER ${event} ON ${quoted(from)} BEGIN ${body} END`;
  return [trigger('INSERT', insert), trigger('UPDATE', `${remove} ${insert}`), trigger('DELETE', remove)];
}

/**
 * Both tables, kept alike by triggers both ways: a view cannot take the previous release's
 * INSERT … ON CONFLICT on SQLite. A write transaction excludes every other, so the two releases'
 * writes of one row cannot deadlock. The triggers come first and the copy skips what they copied,
 * so a write between the statements (each commits on its own) is neither lost nor copied twice.
 */
export function sqliteMovedRows(from: string, to: string, key: readonly string[]): RowsMove {
  const columns = key.map(quoted).join(', ');
  const absent = key.map((column) => `moved.${quoted(column)} = former.${quoted(column)}`).join(' AND ');
  const triggers = [...copyTriggers(from, to, key), ...copyTriggers(to, from, key)];
  const names = [from, to].flatMap((table) => ['insert', 'update', 'delete'].map((event) => `${table}_to_${table === from ? to : from}_${event}`));
  return {
    expand: [
      ...triggers,
      `INSERT INTO ${quoted(to)} (${columns}) SELECT ${key.map((column) => `former.${quoted(column)}`).join(', ')} FROM ${quoted(from)} AS former WHERE NOT EXISTS (SELECT 1 FROM ${quoted(to)} AS moved WHERE ${absent}) ORDER BY ${columns}`,
    ].map((text) => sql.raw(text)),
    contract: [...names.map((name) => `DROP TRIGGER IF EXISTS ${quoted(name)}`), `DROP TABLE IF EXISTS ${quoted(from)}`].map((text) => sql.raw(text)),
  };
}
