#!/usr/bin/env node
/**
 * `npm run bench:seed -- --rows N [--posts P] [--json]`: migrates the database at
 * DATABASE_URL, then fills it with N users and N articles (multi-row INSERTs,
 * one transaction per 100 000 rows), P posts (half published), and a superuser
 * `bench` / `bench-pass-123` with a token, printed at the end.
 * Uses the built framework (dist/): run `npm run build` first.
 */
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { migrateApp, openDatabase } from '../dist/framework/index.js';
import { createToken } from '../dist/framework/stages/authentication/token.js';
import { hashPassword } from '../dist/framework/base/passwords.js';
import service from '../dist/service/app.js';
import { BENCH_PASSWORD, BENCH_USERNAME, SEARCH_TERM, articleAt, randomGenerator, userAt } from './data.mjs';

// Rows per INSERT: 6 bound values a user, kept under both databases' limits on bound parameters (32 766 and 65 535).
const BATCH = 5000;
const ROWS_PER_TRANSACTION = 100_000;

/** Inserts `count` rows made by `rowAt(i)`, in batches, one transaction per ROWS_PER_TRANSACTION. */
async function bulkInsert(database, table, count, rowAt) {
  for (let start = 0; start < count; start += ROWS_PER_TRANSACTION) {
    const end = Math.min(count, start + ROWS_PER_TRANSACTION);
    await database.db.transaction().execute(async (trx) => {
      for (let batch = start; batch < end; batch += BATCH) {
        const rows = [];
        for (let i = batch; i < Math.min(end, batch + BATCH); i++) rows.push(rowAt(i));
        await trx.insertInto(table).values(rows).execute();
      }
    });
  }
}

/** Fills the database at `url`; returns what the benchmark needs to know about it. */
async function seed(url, { rows, posts = 100 }) {
  const started = Date.now();
  const database = openDatabase(url);
  try {
    await migrateApp(database, service);
    const existing = await database.db.selectFrom('users').select('id').where('username', '=', BENCH_USERNAME).executeTakeFirst();
    if (existing) throw new Error(`The database already has a user "${BENCH_USERNAME}": seed a fresh database.`);

    const now = Date.now();
    const random = randomGenerator(42);
    const benchUser = await database.db
      .insertInto('users')
      .values({
        username: BENCH_USERNAME,
        email: 'bench@example.com',
        password: await hashPassword(BENCH_PASSWORD),
        is_active: 1,
        is_superuser: 1,
        date_joined: new Date(now).toISOString(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const token = await createToken(database, Number(benchUser.id));

    // Seeded users share one hash: hashing a million passwords would take hours by design.
    const sharedHash = await hashPassword('seeded-user-password');
    let searchMatches = 0;
    await bulkInsert(database, 'users', rows, (i) => {
      const user = userAt(i, random, now);
      if (user.username.includes(SEARCH_TERM)) searchMatches++;
      return { ...user, password: sharedHash };
    });
    const { firstId, lastId } = await database.db
      .selectFrom('users')
      .select((eb) => [eb.fn.min('id').as('firstId'), eb.fn.max('id').as('lastId')])
      .executeTakeFirstOrThrow();
    await bulkInsert(database, 'articles', rows, () => articleAt(random, now, Number(firstId), Number(lastId)));
    await bulkInsert(database, 'posts', posts, (i) => {
      const created = new Date(now - (posts - i) * 60_000).toISOString();
      return { title: `Post ${i + 1}`, content: `The content of post ${i + 1}.`, published: i % 2, created_at: created, updated_at: created };
    });

    // Fresh statistics for the planner, and (on PostgreSQL) a set scopes map, without which
    // an index-only scan still visits the table.
    await sql`${sql.raw(database.dialect === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE')}`.execute(database.db);
    return {
      dialect: database.dialect,
      users: rows,
      articles: rows,
      posts,
      firstUserId: Number(firstId),
      lastUserId: Number(lastId),
      searchTerm: SEARCH_TERM,
      searchMatches,
      token,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await database.close();
  }
}

async function main() {
  const { values } = parseArgs({
    options: { rows: { type: 'string', default: '10000' }, posts: { type: 'string', default: '100' }, json: { type: 'boolean' } },
  });
  const rows = Number(values.rows);
  const posts = Number(values.posts);
  if (!Number.isSafeInteger(rows) || rows < 1 || !Number.isSafeInteger(posts) || posts < 0) {
    throw new Error('--rows must be a positive integer and --posts a non-negative one.');
  }
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('Set DATABASE_URL to the database to fill.');
  const result = await seed(url, { rows, posts });
  if (values.json) {
    console.log(JSON.stringify(result));
    return;
  }
  console.log(`Seeded ${result.users} users, ${result.articles} articles and ${result.posts} posts in ${result.seconds.toFixed(1)} s.`);
  console.log(`Superuser "${BENCH_USERNAME}" (password "${BENCH_PASSWORD}"), token: ${result.token}`);
}

main().catch((error) => {
  console.error(`bench:seed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
