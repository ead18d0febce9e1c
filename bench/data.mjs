/**
 * Realistic-looking, reproducible rows for the benchmark database: names and
 * e-mails from common first and last names, half the users active,
 * `date_joined` and `created_at` spread over three years.
 */

export const BENCH_USERNAME = 'bench';
export const BENCH_PASSWORD = 'bench-pass-123';

const FIRST_NAMES = [
  'james', 'mary', 'john', 'patricia', 'robert', 'jennifer', 'michael', 'linda', 'william', 'elizabeth',
  'david', 'barbara', 'richard', 'susan', 'joseph', 'jessica', 'thomas', 'sarah', 'charles', 'karen',
  'maria', 'jose', 'ana', 'luis', 'carmen', 'juan', 'sofia', 'mateo', 'lucia', 'diego',
  'wei', 'li', 'yuki', 'hiroshi', 'aiko', 'min', 'ji-woo', 'priya', 'arjun', 'ananya',
  'olga', 'ivan', 'anna', 'piotr', 'katarzyna', 'lars', 'ingrid', 'fatima', 'omar', 'amara',
];

/** Each name is 1/50 of the users; SEARCH_TERM is one of them, so it matches about 2 % of them. */
const LAST_NAMES = [
  'smith', 'johnson', 'williams', 'brown', 'jones', 'garcia', 'miller', 'davis', 'rodriguez', 'martinez',
  'hernandez', 'lopez', 'gonzalez', 'wilson', 'anderson', 'thomas', 'taylor', 'moore', 'jackson', 'martin',
  'lee', 'perez', 'thompson', 'white', 'harris', 'sanchez', 'clark', 'ramirez', 'lewis', 'robinson',
  'kowalski', 'nowak', 'mueller', 'schmidt', 'rossi', 'ferrari', 'dubois', 'moreau', 'tanaka', 'suzuki',
  'wang', 'zhang', 'kim', 'park', 'singh', 'patel', 'ivanov', 'petrov', 'nielsen', 'hansen',
];

/** Matches many users (about 1 in 50), in both username and e-mail, and has trigrams an index can use. */
export const SEARCH_TERM = 'kowalski';

const DOMAINS = ['example.com', 'example.org', 'mail.example.net', 'corp.example.com'];

const WORDS = [
  'database', 'index', 'query', 'server', 'request', 'latency', 'throughput', 'cache', 'schema', 'migration',
  'framework', 'serializer', 'pagination', 'filter', 'search', 'token', 'session', 'worker', 'pool', 'driver',
  'the', 'a', 'of', 'and', 'with', 'without', 'for', 'under', 'load', 'fast',
  'slow', 'simple', 'practical', 'notes', 'guide', 'on', 'why', 'how', 'we', 'built',
];

const THREE_YEARS_MS = 3 * 365 * 24 * 3600 * 1000;

/** mulberry32: a small seeded PRNG, so every run seeds the same data. */
export function randomGenerator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = (random, list) => list[Math.floor(random() * list.length)];
const capitalize = (word) => word[0].toUpperCase() + word.slice(1);
const timeWithin3Years = (random, now) => new Date(now - Math.floor(random() * THREE_YEARS_MS)).toISOString();

/** The i-th seeded user (without a password); `i` makes the username unique. */
export function userAt(i, random, now) {
  const name = `${pick(random, FIRST_NAMES)}.${pick(random, LAST_NAMES)}${i + 1}`;
  return {
    username: name,
    email: `${name}@${pick(random, DOMAINS)}`,
    is_active: i % 2,
    is_superuser: 0,
    date_joined: timeWithin3Years(random, now),
  };
}

function sentence(random, words) {
  const picked = Array.from({ length: words }, () => pick(random, WORDS));
  return `${capitalize(picked.join(' '))}.`;
}

/** An article by a random user with an id in [firstId, lastId]. */
export function articleAt(random, now, firstId, lastId) {
  return {
    title: sentence(random, 4 + Math.floor(random() * 5)).slice(0, -1),
    body: Array.from({ length: 3 }, () => sentence(random, 8 + Math.floor(random() * 8))).join(' '),
    author_id: firstId + Math.floor(random() * (lastId - firstId + 1)),
    created_at: timeWithin3Years(random, now),
  };
}
