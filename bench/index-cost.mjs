#!/usr/bin/env node
/**
 * `DATABASE_URL=postgres://… node bench/index-cost.mjs [--rows 100000] [--inserts 20000] [--rounds 5]`
 *
 * What each kind of index a declaration brings costs a write, on PostgreSQL: a table shaped as the
 * service's `articles` (title, a body of the benchmark's length, author, creation time) is filled
 * with `--rows` rows, then takes `--inserts` one-row INSERTs on one connection, once per set of
 * indexes: the primary key alone, then each index the declarations bring on its own (a foreign
 * key's B-tree, an ordering field's, a composite list index, a search field's trigram GIN), then
 * all of them, as the service declares. The measure is the CPU the connection's backend spent per
 * INSERT (from /proc, so PostgreSQL must run on this machine), with `synchronous_commit` off so
 * the WAL flush does not swamp it, and a GIN index's pending entries merged within the measure;
 * rounds alternate the sets so the machine's drift reaches each. Keep the machine otherwise quiet.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';

const { values: options } = parseArgs({
  options: { rows: { type: 'string', default: '100000' }, inserts: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '5' } },
});
if (!process.env.DATABASE_URL?.startsWith('postgres')) throw new Error('Set DATABASE_URL to a PostgreSQL database on this machine.');
const rows = Number(options.rows);
const inserts = Number(options.inserts);
const TICKS_PER_SECOND = 100;

/** Each set of indexes, beside the primary key: what a declaration brings, one kind at a time, then all. */
const INDEX_SETS = {
  'primary key only': [],
  'foreign key (author_id), B-tree': ['(author_id)'],
  'ordering field (created_at), B-tree': ['(created_at)'],
  'composite list index (author_id, created_at desc, id)': ['(author_id, created_at desc, id)'],
  'search field title, trigram GIN': ['using gin (title gin_trgm_ops)'],
  'search field body, trigram GIN': ['using gin (body gin_trgm_ops)'],
  "all of them (the service's articles)": ['(author_id)', '(created_at)', '(author_id, created_at desc, id)', 'using gin (title gin_trgm_ops)', 'using gin (body gin_trgm_ops)'],
};

const WORDS = 'the quick brown fox jumps over lazy dogs while seven wizards quietly hex jovial bakers near misty harbours'.split(' ');
const sentence = (n) => Array.from({ length: n }, () => WORDS[Math.floor(Math.random() * WORDS.length)]).join(' ');
/** A row as the benchmark's seed writes one: a title of a few words, a body of three sentences. */
const article = () => [sentence(4), [sentence(10), sentence(12), sentence(9)].join('. '), 1 + Math.floor(Math.random() * 1000)];

const backendTicks = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
};

const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
await client.connect();
await client.query('create extension if not exists pg_trgm');
await client.query('set synchronous_commit = off');
const { rows: [{ pid }] } = await client.query('select pg_backend_pid() as pid');

const tables = Object.keys(INDEX_SETS).map((name, n) => ({ name, table: `index_cost_${n}`, indexes: INDEX_SETS[name], micros: [] }));
for (const { table, indexes } of tables) {
  await client.query(`drop table if exists ${table}`);
  await client.query(`create table ${table} (id bigserial primary key, title varchar(255) not null, body text not null, author_id bigint not null, created_at timestamptz not null default now())`);
  // Filled in SQL, the words drawn as the seed's are, so each index starts as deep as a seeded table's.
  await client.query(
    `insert into ${table} (title, body, author_id, created_at)
     select w[1 + (i * 7) % 18] || ' ' || w[1 + (i * 11) % 18] || ' ' || w[1 + (i * 13) % 18] || ' ' || i,
            repeat(w[1 + (i * 3) % 18] || ' ' || w[1 + (i * 5) % 18] || ' ', 12) || i,
            1 + i % 1000, now() - (i || ' seconds')::interval
     from generate_series(1, $1) i, (select $2::text[] w) words`,
    [rows, WORDS],
  );
  for (const index of indexes) await client.query(`create index on ${table} ${index}`);
  await client.query(`vacuum analyze ${table}`);
}

for (let round = 0; round < Number(options.rounds); round += 1) {
  for (const entry of round % 2 ? [...tables].reverse() : tables) {
    // Prepared once, as the server's named statements are: what is left per INSERT is the write and its indexes.
    const insert = { name: `insert_${entry.table}`, text: `insert into ${entry.table} (title, body, author_id) values ($1, $2, $3)` };
    const before = backendTicks(pid);
    for (let n = 0; n < inserts; n += 1) await client.query({ ...insert, values: article() });
    // A GIN index defers its entries to a pending list, merged later (by autovacuum, or once the list
    // outgrows gin_pending_list_limit): merged here, on the same backend, so its cost is counted.
    await client.query(`select gin_clean_pending_list(indexrelid) from pg_index join pg_class on pg_class.oid = indexrelid join pg_am on pg_am.oid = relam where indrelid = $1::regclass and amname = 'gin'`, [entry.table]);
    entry.micros.push(((backendTicks(pid) - before) / TICKS_PER_SECOND / inserts) * 1e6);
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const base = median(tables[0].micros);
console.log(`PostgreSQL backend CPU per one-row INSERT, ${rows.toLocaleString('en')} rows, ${inserts} inserts × ${options.rounds} rounds (median):\n`);
console.log('| indexes beside the primary key | µs per INSERT | above the primary key alone |');
console.log('|---|--:|--:|');
for (const { name, micros } of tables) {
  const value = median(micros);
  console.log(`| ${name} | ${value.toFixed(0)} | ${name === tables[0].name ? '' : `${value >= base ? '+' : ''}${(value - base).toFixed(0)} µs (${((value / base - 1) * 100).toFixed(0)} %)`} |`);
}
for (const { table } of tables) await client.query(`drop table ${table}`);
await client.end();
