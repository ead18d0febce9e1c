/**
 * The store's one cache of compiled statements (store/statements/compiled.ts): one statement per
 * owner and shape, run with each call's values; one bound per owner; a build that reads a
 * scoped table's scopes for a request is never kept; and what it did, counted.
 */
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import type { TableScopes } from '../../src/core/list-query.js';
import { openStoreDatabase } from '../../src/store/connection/database.js';
import { scopesOf } from '../../src/store/conditions/table-scopes.js';
import { compiledStatement, compiledStatementCounts, SHAPES_PER_OWNER } from '../../src/store/statements/compiled.js';
import type { Placeholder } from '../../src/store/statements/placeholder.js';

const database = openStoreDatabase('sqlite::memory:');
afterAll(() => database.close());

/** `SELECT <value> + <shift> AS n`: the shift is part of the shape, the value is bound. */
const plus = (shift: number) => (db: typeof database, value: Placeholder) => db.db.selectNoFrom(sql<number>`${value} + ${sql.lit(shift)}`.as('n'));

describe('compiled statements', () => {
  it('compiles a shape of an owner once and runs it with each call\'s values', async () => {
    const owner = {};
    const before = compiledStatementCounts().compiled;
    const first = compiledStatement(owner, 'plus 1', plus(1) as never);
    expect(compiledStatement(owner, 'plus 1', plus(1) as never)).toBe(first);
    expect(await first(database, [41])).toEqual([{ n: 42 }]);
    expect(await first(database, [1])).toEqual([{ n: 2 }]);
    expect(compiledStatementCounts().compiled).toBe(before + 1);
    // Another owner's shape of the same name is its own statement.
    const other = compiledStatement({}, 'plus 1', plus(2) as never);
    expect(other).not.toBe(first);
    expect(await other(database, [1])).toEqual([{ n: 3 }]);
  });

  it('holds at most SHAPES_PER_OWNER shapes of one owner: past it they are dropped, and still answer right', async () => {
    const owner = {};
    const { dropped } = compiledStatementCounts();
    const first = compiledStatement(owner, 'shift 0', plus(0) as never);
    for (let shift = 1; shift < SHAPES_PER_OWNER; shift++) compiledStatement(owner, `shift ${shift}`, plus(shift) as never);
    expect(compiledStatement(owner, 'shift 0', plus(0) as never)).toBe(first);
    expect(compiledStatementCounts().dropped).toBe(dropped);
    const past = compiledStatement(owner, `shift ${SHAPES_PER_OWNER}`, plus(SHAPES_PER_OWNER) as never);
    expect(compiledStatementCounts().dropped).toBe(dropped + SHAPES_PER_OWNER);
    expect(await past(database, [1])).toEqual([{ n: SHAPES_PER_OWNER + 1 }]);
    const again = compiledStatement(owner, 'shift 0', plus(0) as never);
    expect(again).not.toBe(first);
    expect(await again(database, [5])).toEqual([{ n: 5 }]);
  });

  it('builds per request, never keeps, a statement whose build read a scoped table\'s scopes', async () => {
    const within: string[] = [];
    const scopes: TableScopes = { scopedTables: new Set(['notes']), scopesOf: (table) => (within.push(table), []) };
    const request = { ...database, scopes };
    const { perRequest } = compiledStatementCounts();
    let builds = 0;
    const statement = compiledStatement({}, 'reads notes', ((db: typeof database, value: Placeholder) => {
      builds++;
      scopesOf(db, 'notes');
      return db.db.selectNoFrom(sql<number>`${value}`.as('n'));
    }) as never);
    expect(await statement(request, [1])).toEqual([{ n: 1 }]);
    expect(await statement(request, [2])).toEqual([{ n: 2 }]);
    expect(compiledStatementCounts().perRequest).toBe(perRequest + 1);
    // Once to learn it reads a scoped table, then with each request's values.
    expect(builds).toBe(3);
    expect(within).toEqual(['notes', 'notes', 'notes']);
    // The app's own code (no scopes) gets a kept statement of the same shape.
    expect(await statement(database, [3])).toEqual([{ n: 3 }]);
    expect(await statement(database, [4])).toEqual([{ n: 4 }]);
    expect(builds).toBe(4);
  });
});
