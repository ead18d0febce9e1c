/**
 * Caches keyed by what requests bring (SQL texts, LIKE patterns, field choices) must not grow
 * without end: past its limit a map starts over, and the few hot keys fill it again at once.
 */

/** `map`'s value for `key`, made by `make` the first time it is asked for. */
export function cached<K, V>(map: Map<K, V>, key: K, limit: number, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    if (map.size >= limit) map.clear();
    value = make();
    map.set(key, value);
  }
  return value;
}
