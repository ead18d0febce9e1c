/** A list query's shape: what its SQL depends on, apart from the values it binds (store/statements/list-shape.ts). */
import { describe, expect, it } from 'vitest';
import { Day } from '../../src/core/fields.js';
import type { ListQuery } from '../../src/core/list-query.js';
import { storeCondition } from '../../src/store/conditions/store-condition.js';
import { listShapeOf } from '../../src/store/statements/list-shape.js';

const query = (parts: Partial<ListQuery>): ListQuery => ({ page: 1, pageSize: 20, search: [], ordering: [], filters: [], ...parts });

describe('listShapeOf', () => {
  it('binds every value and keys what chooses the SQL: fields, lookups, list lengths, isnull, terms, ordering', () => {
    const shape = listShapeOf(
      query({
        filters: [
          { field: 'rank', lookup: 'in', value: [1, 2] },
          { field: 'note', lookup: 'isnull', value: true },
        ],
        scope: [{ field: 'owner_id', lookup: 'exact', value: 7 }],
        search: ['tea'],
        ordering: [{ field: 'rank', descending: true }],
      }),
    )!;
    expect(shape.values).toEqual([1, 2, 7, 'tea']);
    const other = (parts: Partial<ListQuery>) => listShapeOf(query({ ...parts }))!.key;
    expect(other({ filters: [{ field: 'rank', lookup: 'in', value: [1, 2, 3] }] })).not.toBe(other({ filters: [{ field: 'rank', lookup: 'in', value: [4, 5] }] }));
    expect(other({ filters: [{ field: 'note', lookup: 'isnull', value: true }] })).not.toBe(other({ filters: [{ field: 'note', lookup: 'isnull', value: false }] }));
    expect(other({ filters: [{ field: 'rank', lookup: 'gt', value: 1 }] })).not.toBe(other({ filters: [{ field: 'rank', lookup: 'gte', value: 1 }] }));
    expect(other({ ordering: [{ field: 'rank', descending: true }] })).not.toBe(other({ ordering: [{ field: 'rank', descending: false }] }));
    expect(other({ search: ['a'] })).not.toBe(other({ search: ['a', 'b'] }));
    expect(other({ filters: [{ field: 'rank', lookup: 'exact', value: 1 }] })).toBe(other({ filters: [{ field: 'rank', lookup: 'exact', value: 9 }] }));
  });

  it('pads an `in` list to a power of two with its last value, so lists of 1 to 500 values make 10 statements, not 500', () => {
    const among = (length: number) => listShapeOf(query({ filters: [{ field: 'id', lookup: 'in', value: Array.from({ length }, (_, index) => index + 1) }] }))!;
    expect(among(5).values).toEqual([1, 2, 3, 4, 5, 5, 5, 5]);
    expect(among(8).values).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(among(1).values).toEqual([1]);
    expect(among(5).key).toBe(among(8).key);
    expect(among(5).key).not.toBe(among(9).key);
    expect(new Set(Array.from({ length: 500 }, (_, index) => among(index + 1).key)).size).toBe(10);
    // The statement takes the padded list as it binds it.
    expect(among(3).query(['a', 'b', 'c', 'd']).filters).toEqual([{ field: 'id', lookup: 'in', value: ['a', 'b', 'c', 'd'] }]);
  });

  it('rebuilds the query with stand-ins in place of its values, in their order', () => {
    const shape = listShapeOf(
      query({
        filters: [
          { field: 'rank', lookup: 'range', value: [1, 5] },
          { field: 'note', lookup: 'isnull', value: false },
        ],
        scope: [{ field: 'owner_id', lookup: 'exact', value: 7 }],
        search: ['tea', 'cup'],
      }),
    )!;
    const rebuilt = shape.query(['a', 'b', 'c', 'd', 'e']);
    expect(rebuilt.filters).toEqual([
      { field: 'rank', lookup: 'range', value: ['a', 'b'] },
      { field: 'note', lookup: 'isnull', value: false },
    ]);
    expect(rebuilt.scope).toEqual([{ field: 'owner_id', lookup: 'exact', value: 'c' }]);
    expect(rebuilt.search).toEqual(['d', 'e']);
  });

  it('has none where a value chooses the SQL beyond its key (a bare date) or a condition is the store’s own', () => {
    const day = new Day(new Date('2026-01-01T00:00:00Z'), new Date('2026-01-02T00:00:00Z'));
    expect(listShapeOf(query({ filters: [{ field: 'at', lookup: 'exact', value: day }] }))).toBeUndefined();
    expect(listShapeOf(query({ filters: [{ field: 'at', lookup: 'in', value: [day] }] }))).toBeUndefined();
    expect(listShapeOf(query({ scope: [storeCondition((eb) => eb.lit(true))] }))).toBeUndefined();
    const reference = { reference: { column: 'list_id', table: 'lists', within: [], nullable: false } };
    expect(listShapeOf(query({ scope: [reference] }))).toBeUndefined();
  });
});
