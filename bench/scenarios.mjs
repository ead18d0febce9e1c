/**
 * The benchmark's scenarios, (a) to (i), shared by run.mjs and compare.mjs;
 * those with `baseline: true` are served by bench/baseline/server.mjs too.
 * `seeded` names the users to read ({ firstUserId, lastUserId, searchTerm }) and, for a scenario
 * with `pool: true` (only bench/compare.mjs runs those), the first id of the rows made for it (poolFrom).
 */
import { randomBytes } from 'node:crypto';

/**
 * A scenario makes its k-th request: { method, path, body? }. Ids rotate over
 * the seeded users in a scattered order, so reads are not one cached row.
 */
export function scenarios(seeded, searchPage) {
  const runId = randomBytes(3).toString('hex');
  const userCount = seeded.lastUserId - seeded.firstUserId + 1;
  const userId = (k) => seeded.firstUserId + ((k * 7919) % userCount);
  const get = (path) => () => ({ method: 'GET', path });
  return [
    { key: 'a', title: '(a) users list, `is_active=true&ordering=-date_joined`', auth: true, baseline: true, request: get('/api/v1/users/?is_active=true&ordering=-date_joined') },
    { key: 'b', title: `(b) users search \`${seeded.searchTerm}\`, page ${searchPage}`, auth: true, request: get(`/api/v1/users/?search=${seeded.searchTerm}&page=${searchPage}`) },
    { key: 'c', title: '(c) users detail', auth: true, baseline: true, request: (k) => ({ method: 'GET', path: `/api/v1/users/${userId(k)}/` }) },
    { key: 'f', title: '(f) articles list, nested authors', auth: true, request: get('/api/v1/articles/') },
    { key: 'g', title: '(g) posts list (published)', auth: false, baseline: true, request: get('/api/posts') },
    {
      key: 'd',
      title: '(d) users create (scrypt hash per request)',
      auth: true,
      status: 201,
      request: (k) => ({
        method: 'POST',
        path: '/api/v1/users/',
        body: { username: `new_${runId}_${k}`, email: `new_${runId}_${k}@example.com`, password: 'a-new-password' },
      }),
    },
    // The bench user is a superuser, so it may change every user it targets (itself included); no password, so no hashing.
    { key: 'e', title: '(e) users PATCH', auth: true, baseline: true, request: (k) => ({ method: 'PATCH', path: `/api/v1/users/${userId(k)}/`, body: { email: `changed_${k}@example.com` } }) },
    {
      key: 'h',
      title: '(h) posts create',
      auth: false,
      status: 201,
      request: (k) => ({ method: 'POST', path: '/api/posts', body: { title: `Bench ${runId} ${k}`, content: 'Written by the benchmark.', published: false } }),
    },
    {
      key: 'i',
      title: "(i) articles create (the token's user as author)",
      auth: true,
      baseline: true,
      status: 201,
      request: (k) => ({ method: 'POST', path: '/api/v1/articles/', body: { title: `Bench ${runId} ${k}`, body: 'Written by the benchmark.' } }),
    },
    {
      key: 'k',
      title: "(k) articles bulk create of 100 (the token's user as author)",
      auth: true,
      baseline: true,
      status: 201,
      request: (k) => ({ method: 'POST', path: '/api/v1/articles/', body: Array.from({ length: 100 }, (_, row) => ({ title: `Bench ${runId} ${k}.${row}`, body: 'Written by the benchmark.' })) }),
    },
    // Each request deletes another article of a pool made for the run (`pool`: bench/compare.mjs makes it, from `seeded.poolFrom` on).
    {
      key: 'j',
      title: '(j) articles DELETE',
      auth: true,
      baseline: true,
      pool: true,
      bodiless: true,
      status: 204,
      request: (k) => ({ method: 'DELETE', path: `/api/v1/articles/${seeded.poolFrom + k}/` }),
    },
  ];
}

export function headersFor(scenario, token) {
  // No content type where no body is sent: Fastify's JSON parser refuses an empty body that names one.
  return { ...(!scenario.bodiless && { 'content-type': 'application/json' }), ...(scenario.auth ? { authorization: `Bearer ${token}` } : {}) };
}
