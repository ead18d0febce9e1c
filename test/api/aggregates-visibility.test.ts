/**
 * Aggregates as Django's `annotate` counts them, when the app asks (issue 46):
 * `computed.count/sum/…(…, { visibility: 'all' })` aggregates every related row, whatever the
 * related collection's scope lets the viewer see (an event's seats sold is the same for every
 * viewer), while the default aggregates only the rows the viewer may see. The rows themselves stay
 * hidden on every other path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowAny, collection, computed, defineApp, fields, joinTable, model, relations, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Event = model('events', { id: fields.id(), title: fields.string({ maxLength: 100 }) });
const Seat = model('seats', {
  id: fields.id(),
  event_id: fields.foreignKey('events'),
  price: fields.decimal({ digits: 8, places: 2 }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
const Badge = model('badges', {
  id: fields.id(),
  points: fields.integer(),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
const eventBadges = joinTable('events', 'badges');

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('events', {
        serializer: serializer(Event, {
          fields: ['id', 'title', 'badges', 'sold', 'sold_to_me', 'revenue', 'my_spend', 'top_price', 'any_sold', 'points', 'my_points'],
          relations: { badges: relations.manyToMany(eventBadges) },
          computed: {
            sold: computed.count('seats', 'event_id', { visibility: 'all' }),
            sold_to_me: computed.count('seats', 'event_id'),
            revenue: computed.sum(Seat, 'event_id', { of: 'price', default: 0, visibility: 'all' }),
            my_spend: computed.sum(Seat, 'event_id', { of: 'price', default: 0, visibility: 'visible' }),
            top_price: computed.max(Seat, 'event_id', { of: 'price', visibility: 'all' }),
            any_sold: computed.exists('seats', 'event_id', { visibility: 'all' }),
            // Over a many-to-many: every badge the join table links, though each user sees only their own.
            points: computed.sum(Badge, eventBadges, { of: 'points', visibility: 'all' }),
            my_points: computed.sum(Badge, eventBadges, { of: 'points' }),
          },
        }),
        orderingFields: ['sold', 'sold_to_me'],
        permissions: [allowAny],
      }),
      // Each buyer sees their own seats only.
      collection('seats', { serializer: serializer(Seat, { fields: ['id', 'event_id', 'price', 'owner_id'] }), scope: ({ user }) => ({ owner_id: user?.id ?? null }) }),
      collection('badges', { serializer: serializer(Badge, { fields: ['id', 'points'] }), scope: ({ user }) => ({ owner_id: user?.id ?? null }) }),
    ],
  }),
);

let api: TestApi;
let alice: TestUser;
let bob: TestUser;
let gala: number;
let matinee: number;

const post = async (path: string, user: TestUser, body: unknown) => {
  const reply = await api.request('POST', `/api/v1/${path}/`, { token: user.token, body });
  expect(reply.status, JSON.stringify(reply.json)).toBe(201);
  return reply.json;
};
const get = async (path: string, user?: TestUser) => (await api.request('GET', `/api/v1/${path}`, { token: user?.token })).json;

beforeAll(async () => {
  api = await startApi({}, app);
  alice = await api.user('alice');
  bob = await api.user('bob');
  const gold = (await post('badges', alice, { points: 5 })).id;
  const silver = (await post('badges', bob, { points: 3 })).id;
  gala = (await post('events', alice, { title: 'Gala' })).id;
  matinee = (await post('events', alice, { title: 'Matinee' })).id;
  // The links are the app's to make here: neither user may name the other's badge.
  await api.database.db.insertInto('events_badges' as never).values([{ event_id: gala, badge_id: gold }, { event_id: gala, badge_id: silver }] as never).execute();
  await post('seats', alice, { event_id: gala, price: '40.00' });
  await post('seats', alice, { event_id: gala, price: '40.00' });
  await post('seats', bob, { event_id: gala, price: '95.50' });
  await post('seats', bob, { event_id: matinee, price: '12.00' });
});
afterAll(() => api.close());

describe("an aggregate over every related row (visibility: 'all')", () => {
  it('counts the rows the viewer cannot see; the default counts only those they can', async () => {
    expect(await get(`events/${gala}/`, alice)).toMatchObject({
      sold: 3,
      sold_to_me: 2,
      revenue: '175.50',
      my_spend: '80.00',
      top_price: '95.50',
      any_sold: true,
      points: 8,
      my_points: 5,
    });
    expect(await get(`events/${gala}/`, bob)).toMatchObject({ sold: 3, sold_to_me: 1, revenue: '175.50', my_spend: '95.50', top_price: '95.50', points: 8, my_points: 3 });
    // An anonymous viewer sees no seat, and the same totals.
    expect(await get(`events/${gala}/`)).toMatchObject({ sold: 3, sold_to_me: 0, revenue: '175.50', my_spend: '0.00', any_sold: true, points: 8, my_points: null });
    expect(await get(`events/${matinee}/`, alice)).toMatchObject({ sold: 1, sold_to_me: 0, revenue: '12.00', my_spend: '0.00', top_price: '12.00', any_sold: true });
  });

  it('is the same in a list, ordered by, and in the answer to a write', async () => {
    const listed = await get('events/?ordering=-sold', alice);
    expect(listed.results.map((event: { id: number; sold: number; sold_to_me: number }) => [event.id, event.sold, event.sold_to_me])).toEqual([
      [gala, 3, 2],
      [matinee, 1, 0],
    ]);
    // Ordered by the default, the matinee's seat (bob's) counts nothing for alice.
    expect((await get('events/?ordering=sold_to_me', alice)).results.map((event: { id: number }) => event.id)).toEqual([matinee, gala]);
    const patched = await api.request('PATCH', `/api/v1/events/${gala}/`, { token: alice.token, body: { title: 'Gala night' } });
    expect(patched.json).toMatchObject({ sold: 3, sold_to_me: 2, revenue: '175.50' });
  });

  it('shows nothing more of the rows themselves', async () => {
    expect((await get('seats/', alice)).count).toBe(2);
    expect((await get(`events/${gala}/`, alice)).badges).toHaveLength(1);
  });
});

describe('declaring it', () => {
  it('takes visible or all only', () => {
    expect(() => computed.count('seats', 'event_id', { visibility: 'everyone' as never })).toThrow("computed.count over seats: visibility is 'visible' or 'all'.");
    expect(() => computed.sum(Seat, 'event_id', { of: 'price', visibility: 'none' as never })).toThrow("computed.sum over seats: visibility is 'visible' or 'all'.");
  });
});
