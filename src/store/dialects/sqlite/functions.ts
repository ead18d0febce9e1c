/**
 * The SQL functions SQLite connections need (the server's own and its reader thread's): `like_cs`
 * and `like_ci`, LIKE as PostgreSQL matches it.
 */
import type SQLite from 'better-sqlite3';
import { cached } from '../../../core/cache.js';

/** SQLite's own lower() and LIKE fold ASCII only; like_ci folds all of Unicode, as PostgreSQL's ILIKE does. */
export function registerLikeFunctions(connection: SQLite.Database): void {
  const matching = (fold: boolean) => (pattern: unknown, text: unknown) =>
    typeof pattern === 'string' && typeof text === 'string' ? likeMatcher(pattern, fold)(text) : null;
  connection.function('like_cs', { deterministic: true }, matching(false));
  connection.function('like_ci', { deterministic: true }, matching(true));
}

type Matcher = (text: string) => 1 | 0;
const MATCHERS_KEPT = 1000;
const exactMatchers = new Map<string, Matcher>();
const foldedMatchers = new Map<string, Matcher>();

/**
 * A LIKE pattern (`%`, `_`, `\` escapes) → its matcher, made once per distinct pattern (not per row:
 * SQLite calls it for every row of a scan, so per row it costs only the row's own text). The
 * patterns the store makes (a literal with `%` at either end) need no RegExp: they take the fast
 * string tests. `fold`: case-insensitive, the pattern folded once here and each row's text as it comes.
 */
function likeMatcher(pattern: string, fold: boolean): Matcher {
  if (!fold) return cached(exactMatchers, pattern, MATCHERS_KEPT, () => compileLike(pattern));
  return cached(foldedMatchers, pattern, MATCHERS_KEPT, () => {
    const matches = compileLike(pattern.toLowerCase());
    return (text) => matches(text.toLowerCase());
  });
}

function compileLike(pattern: string): Matcher {
  const parts: string[] = [''];
  let wildcards = false;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === '\\' && i + 1 < pattern.length) parts[parts.length - 1] += pattern[++i]!;
    else if (char === '%') parts.push('');
    else if (char === '_') wildcards = true;
    else parts[parts.length - 1] += char;
  }
  const [head = '', middle = '', tail = ''] = parts;
  if (wildcards || parts.length > 3) return regexpMatcher(pattern);
  if (parts.length === 1) return (text) => (text === head ? 1 : 0);
  if (parts.length === 2 && middle === '') return (text) => (text.startsWith(head) ? 1 : 0);
  if (parts.length === 2 && head === '') return (text) => (text.endsWith(middle) ? 1 : 0);
  if (parts.length === 3 && head === '' && tail === '') return (text) => (text.includes(middle) ? 1 : 0);
  return regexpMatcher(pattern);
}

/** Any LIKE pattern → an anchored RegExp matcher (code points, as PostgreSQL's `_`). */
function regexpMatcher(pattern: string): Matcher {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === '\\' && i + 1 < pattern.length) source += escapeRegExp(pattern[++i]!);
    else if (char === '%') source += '[\\s\\S]*';
    else if (char === '_') source += '[\\s\\S]';
    else source += escapeRegExp(char);
  }
  const regexp = new RegExp(`^${source}$`, 'u');
  return (text) => (regexp.test(text) ? 1 : 0);
}

// Only syntax characters: under the `u` flag escaping anything else (`-`, say) is a SyntaxError.
const escapeRegExp = (char: string): string => char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
