/**
 * The query plans PostgreSQL picks for the SQL the service really sends (captured
 * from requests), on enough rows that the planner has a choice: lists and
 * their counts are read through indexes, search through the trigram indexes;
 * which statements are prepared (searches are not).
 * Shapes only, never timings. PostgreSQL only (scripts/test.js runs test/postgres there).
 */
import type { FastifyInstance } from 'fastify';
import { CompiledQuery, sql, type KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, loadConfig, migrateApp } from '../../src/framework/index.js';
import { openStoreDatabase, type StoreDatabase } from '../../src/store/connection/database.js';
import { createToken } from '../../src/framework/stages/authentication/token.js';
import service from '../../src/service/app.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';

const ROWS = 20_000;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

describe.runIf(testDialect === 'postgres')('query plans on PostgreSQL', () => {
  let testDatabase: TestDatabase;
  let database: StoreDatabase;
  let app: FastifyInstance;
  let token: string;
  const sent: { sql: string; parameters: readonly unknown[] }[] = [];

  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    // One connection, so the statements requests prepare can be read back from pg_prepared_statements.
    database = openStoreDatabase(testDatabase.url, { maxConnections: 1, maxIdleConnections: 1 });
    await migrateApp(database, service);
    // 1 user in 50 is a Kowalski, by name and e-mail; half are active; date_joined one minute apart.
    await sql`
      INSERT INTO users (username, email, password, is_active, is_superuser, date_joined)
      SELECT name || i, name || i || '@example.com', 'x',
             i % 2 = 1, i = 1, now() - i * interval '1 minute'
      FROM generate_series(1, ${ROWS}) AS i, LATERAL (SELECT CASE WHEN i % 50 = 0 THEN 'anna.kowalski' ELSE 'user' END AS name) AS names`.execute(database.db);
    await sql`
      INSERT INTO articles (title, body, author_id, created_at)
      SELECT 'Article ' || i, 'About databases.', 1 + i % ${ROWS}, now() - i * interval '1 minute'
      FROM generate_series(1, ${ROWS}) AS i`.execute(database.db);
    await sql`VACUUM ANALYZE users, articles`.execute(database.db);
    token = await createToken(database, 1);

    // The app gets the same database, with every statement it sends recorded with its values:
    // precompiled ones through `run`, the rest through Kysely (which also hands a plugin the
    // queries it only compiles, and each subquery: a statement counts once its result comes back).
    const compiled = new WeakMap<object, CompiledQuery>();
    const recorder: KyselyPlugin = {
      transformQuery: ({ node, queryId }) => {
        compiled.set(queryId, database.db.getExecutor().compileQuery(node, queryId));
        return node;
      },
      transformResult: async ({ result, queryId }) => {
        sent.push(compiled.get(queryId)!);
        return result;
      },
    };
    const config = loadConfig({ DATABASE_URL: testDatabase.url, LOG_LEVEL: 'silent', THROTTLE_ANON: 'off', THROTTLE_USER: 'off' });
    const recorded: StoreDatabase = {
      ...database,
      db: database.db.withPlugin(recorder),
      run: async (text, parameters, options) => {
        const rows = await database.run(text, parameters, options);
        sent.push({ sql: text, parameters });
        return rows;
      },
    };
    app = await buildApp(service, { database: recorded, config });
  });

  afterAll(async () => {
    await app?.close();
    await database?.close();
    await testDatabase?.drop();
  });

  /** Requests `url` and returns the plan of each statement it sent that reads `table`. */
  async function plansOf(url: string, table: string): Promise<{ sql: string; nodes: PlanNode[] }[]> {
    sent.length = 0;
    const response = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    expect(response.statusCode).toBe(200);
    const reads = sent.filter((query) => /^(select|with)\b/.test(query.sql) && query.sql.includes(` from "${table}"`));
    return Promise.all(
      reads.map(async (query) => {
        const { rows } = await database.db.executeQuery<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
          CompiledQuery.raw(`EXPLAIN (FORMAT JSON) ${query.sql}`, [...query.parameters]),
        );
        return { sql: query.sql, nodes: nodesOf(rows[0]!['QUERY PLAN'][0]!.Plan) };
      }),
    );
  }

  const scansOf = (nodes: PlanNode[], table: string): PlanNode[] => nodes.filter((node) => node['Relation Name'] === table);
  const indexesUsed = (nodes: PlanNode[]): (string | undefined)[] => nodes.map((node) => node['Index Name']).filter(Boolean);

  /** The one statement that reads a list's count and its page together. */
  const countedPageOf = async (url: string, table: string) => {
    const statements = (await plansOf(url, table)).filter((plan) => plan.sql.includes('count(*)') && plan.sql.includes(' limit '));
    expect(statements).toHaveLength(1);
    return statements[0]!;
  };

  it('counts and pages a filtered, ordered users list from indexes, without a sort, in one statement', async () => {
    const { nodes } = await countedPageOf('/api/v1/users/?is_active=true&ordering=-date_joined&page=3', 'users');
    const types = nodes.map((node) => node['Node Type']);
    expect(types).toContain('Index Only Scan'); // the count
    expect(indexesUsed(nodes)).toContain('users_is_active_date_joined_idx'); // the page, in its order
    expect(types).not.toContain('Sort');
    expect(types).not.toContain('Seq Scan');
  });

  it('serves search on username and email from the trigram indexes', async () => {
    const plans = await plansOf('/api/v1/users/?search=kowalski&page=2', 'users');
    expect(plans).toHaveLength(2);
    const [count] = plans;
    expect(indexesUsed(count!.nodes)).toEqual(expect.arrayContaining(['users_username_trgm_idx', 'users_email_trgm_idx']));
    for (const plan of plans) expect(plan.nodes.map((node) => node['Node Type'])).not.toContain('Seq Scan');
  });

  it('pages deep into a search by sorting the matches the trigram indexes find, not by walking the primary key', async () => {
    // 400 Kowalskis among 20 000 users, every 50th. PostgreSQL guesses 800 (a match on the name and
    // one on the e-mail taken as unrelated), so for page 10's `ORDER BY id LIMIT 20 OFFSET 180` it would
    // walk users_pkey through half the table, testing each row against the pattern.
    const [count, page] = await plansOf('/api/v1/users/?search=kowalski&page=10', 'users');
    expect(count!.sql).toContain('count(*)');
    expect(indexesUsed(page!.nodes)).toEqual(expect.arrayContaining(['users_username_trgm_idx', 'users_email_trgm_idx']));
    expect(indexesUsed(page!.nodes)).not.toContain('users_pkey');
  });

  it('serves search on article titles and bodies from the trigram indexes', async () => {
    const [count] = await plansOf('/api/v1/articles/?search=Article%201234', 'articles');
    expect(indexesUsed(count!.nodes)).toEqual(expect.arrayContaining(['articles_title_trgm_idx', 'articles_body_trgm_idx']));
  });

  it("counts and pages one author's articles, newest first, from an index", async () => {
    const { nodes } = await countedPageOf('/api/v1/articles/?author_id=42&ordering=-created_at', 'articles');
    expect(scansOf(nodes, 'articles').every((node) => node['Node Type'] !== 'Seq Scan')).toBe(true);
    expect(indexesUsed(nodes)).toContain('articles_author_id_created_at_idx');
  });

  it('reads a user by primary key and the token by its hash, in one statement', async () => {
    const reads = await plansOf('/api/v1/users/777/', 'users');
    const detail = reads.find((read) => read.sql.includes('"auth_tokens"'));
    expect(indexesUsed(detail!.nodes)).toEqual(expect.arrayContaining(['users_pkey', 'auth_tokens_key_hash_key']));
    expect(detail!.nodes.map((node) => node['Node Type'])).not.toContain('Seq Scan');
  });

  it('prepares the fixed lookups and lists, and plans every search with its pattern', async () => {
    // Past five runs of a named statement PostgreSQL may switch to a generic plan, which for `ILIKE $1`
    // walked the primary key instead of the trigram indexes: pattern matches must stay unnamed.
    for (let round = 0; round < 8; round++) {
      for (const url of ['/api/v1/users/2/', '/api/v1/users/?search=kowalski', '/api/v1/users/?username__icontains=user2', '/api/v1/users/?is_active=true']) {
        expect((await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(200);
      }
    }
    const { rows } = await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`.execute(database.db);
    const statements = rows.map(({ statement }) => statement);
    expect(statements.some((text) => /from "users" where "users"\."id" = \$\d/i.test(text))).toBe(true);
    expect(statements.some((text) => /"auth_tokens"\."key_hash" = \$1/.test(text))).toBe(true);
    expect(statements.some((text) => /count\(/i.test(text) && /"is_active" = \$1/.test(text))).toBe(true);
    expect(statements.filter((text) => /\bi?like\b/i.test(text))).toEqual([]);
  });
});
