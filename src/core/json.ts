/**
 * JSON documents of any depth. A JSON field refuses a value nested deeper than JSON_MAX_DEPTH, but
 * one stored before that limit, or by other means than the API, may be deeper: JSON.parse reads it
 * at any depth, and the answers and pages showing it are written by stringifyJson, which does too.
 */

/** How many levels of arrays and objects a JSON field's value may nest (docs/guides/serializers-and-fields.md, "Field kinds"). */
/** A JSON object: not null, not an array. */
export const isJsonObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export const JSON_MAX_DEPTH = 100;

/** Whether `value` nests arrays and objects more than `max` levels deep, walked with a stack of its own (no recursion to overflow). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

/**
 * JSON.stringify(value, null, indent), whatever the value's depth. Indented, a value nested past
 * JSON_MAX_DEPTH is indented to that depth and compact below it: indentation grows with the square
 * of the depth, and a value some thousands of levels deep would be hundreds of megabytes.
 */
export function stringifyJson(value: unknown, indent = 0): string {
  if (indent > 0 && nestsDeeperThan(value, JSON_MAX_DEPTH)) return writeWithStack(value, indent);
  try {
    return JSON.stringify(value, null, indent);
  } catch (error) {
    // JSON.stringify recurses, and overflows the call stack a few thousand levels down.
    if (!(error instanceof RangeError)) throw error;
    return writeWithStack(value, indent);
  }
}

type Step = { readonly text: string } | { readonly value: unknown; readonly depth: number };

const written = (value: unknown): boolean => value !== undefined && typeof value !== 'function' && typeof value !== 'symbol';

/** What JSON.stringify writes, with a stack of steps in place of the call stack. */
function writeWithStack(root: unknown, indent: number): string {
  const out: string[] = [];
  const steps: Step[] = [{ value: root, depth: 0 }];
  const newline = (depth: number): string => (indent > 0 && depth <= JSON_MAX_DEPTH ? `\n${' '.repeat(indent * depth)}` : '');
  for (let step = steps.pop(); step; step = steps.pop()) {
    if ('text' in step) {
      out.push(step.text);
      continue;
    }
    const { depth } = step;
    let value = step.value;
    if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') value = (value as { toJSON(): unknown }).toJSON();
    if (typeof value !== 'object' || value === null) {
      // A scalar, as JSON.stringify writes it (an array's undefined is null).
      out.push(JSON.stringify(value) ?? 'null');
      continue;
    }
    const array = Array.isArray(value);
    const entries: [string | undefined, unknown][] = array ? (value as unknown[]).map((item) => [undefined, item]) : Object.entries(value).filter(([, item]) => written(item));
    const [open, close] = array ? ['[', ']'] : ['{', '}'];
    out.push(open);
    steps.push({ text: entries.length > 0 ? `${newline(depth)}${close}` : close });
    for (let index = entries.length - 1; index >= 0; index--) {
      const [key, item] = entries[index]!;
      steps.push({ value: item, depth: depth + 1 });
      const name = key === undefined ? '' : `${JSON.stringify(key)}:${indent > 0 ? ' ' : ''}`;
      steps.push({ text: `${index > 0 ? ',' : ''}${newline(depth + 1)}${name}` });
    }
  }
  return out.join('');
}
