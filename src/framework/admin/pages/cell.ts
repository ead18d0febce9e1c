/** A record's value as text in a cell or a list of what a deletion removes. */
import { stringifyJson } from '../../../core/json.js';

export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  return typeof value === 'object' ? stringifyJson(value) : String(value);
}
