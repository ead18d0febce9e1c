/**
 * The SQL functions SQLite connections need (the server's own and its reader thread's): `like_cs`
 * and `like_ci`, LIKE as PostgreSQL matches it; `decimal_sum`, an exact sum of decimals.
 */
import type SQLite from 'better-sqlite3';
import { cached } from '../../../core/cache.js';

export function registerSqlFunctions(connection: SQLite.Database): void {
  // SQLite's own lower() and LIKE fold ASCII only; like_ci folds all of Unicode, as PostgreSQL's ILIKE does.
  const matching = (fold: boolean) => (pattern: unknown, text: unknown) =>
    typeof pattern === 'string' && typeof text === 'string' ? likeMatcher(pattern, fold)(text) : null;
  connection.function('like_cs', { deterministic: true }, matching(false));
  connection.function('like_ci', { deterministic: true }, matching(true));
  connection.aggregate('decimal_sum', {
    start: () => null,
    step: (total: Exact | null, ...factors: unknown[]) => {
      if (factors.some((factor) => factor === null || factor === undefined)) return total;
      const product = factors.map(exactOf).reduce(times);
      return total === null ? product : plus(total, product);
    },
    result: (total: Exact | null) => (total === null ? null : sumOf(total)),
    varargs: true,
    deterministic: true,
    // Integers as bigints, exact past 2^53.
    safeIntegers: true,
  });
}

/** A decimal as an integer and its places: `digits` × 10^-places. */
interface Exact {
  readonly digits: bigint;
  readonly places: number;
}

const DECIMAL_TEXT = /^(-?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i;

/**
 * A stored value → the decimal it holds. A decimal column keeps a double, whose shortest text
 * (JavaScript's) is the decimal of at most 15 digits it was stored from: fields.decimal allows no
 * more, and a double tells every such decimal apart.
 */
function exactOf(value: unknown): Exact {
  if (typeof value === 'bigint') return { digits: value, places: 0 };
  const match = DECIMAL_TEXT.exec(String(value));
  if (!match) throw new TypeError(`decimal_sum: ${String(value)} is no number`);
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  const shift = Number(exponent) - fraction.length;
  const digits = BigInt(`${sign}${whole}${fraction}` === sign ? '0' : `${sign}${whole}${fraction}`);
  return shift >= 0 ? { digits: digits * 10n ** BigInt(shift), places: 0 } : { digits, places: -shift };
}

const scaled = ({ digits, places }: Exact, to: number): bigint => digits * 10n ** BigInt(to - places);
const plus = (a: Exact, b: Exact): Exact => {
  const places = Math.max(a.places, b.places);
  return { digits: scaled(a, places) + scaled(b, places), places };
};
const times = (a: Exact, b: Exact): Exact => ({ digits: a.digits * b.digits, places: a.places + b.places });

/**
 * A sum as SQLite is to hold it: a double while it has at most 15 significant digits, which the
 * double keeps (so it compares and orders as numbers do); beyond, its exact text.
 */
function sumOf(total: Exact): number | string {
  const text = textOf(total);
  return (total.digits < 0n ? -total.digits : total.digits).toString().length <= 15 ? Number(text) : text;
}

function textOf({ digits, places }: Exact): string {
  const text = (digits < 0n ? -digits : digits).toString().padStart(places + 1, '0');
  const body = places === 0 ? text : `${text.slice(0, -places)}.${text.slice(-places)}`;
  return digits < 0n ? `-${body}` : body;
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
