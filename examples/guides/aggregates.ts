/** The samples of docs/guides/serializers-and-fields.md on aggregates and records' own URLs, as one app. */
import { User, collection, computed, defineApp, fields, isAuthenticated, joinTable, model, relations, serializer } from 'restfold';

const Order = model('orders', { id: fields.id(), placed_at: fields.timestamp({ default: () => new Date() }) });
const Tag = model('tags', { id: fields.id(), name: fields.string({ maxLength: 50, unique: true }), weight: fields.integer({ default: 1 }) });

// #region aggregates
const Line = model('lines', {
  id: fields.id(),
  order_id: fields.foreignKey('orders'),
  quantity: fields.integer(),
  unit_price: fields.decimal({ digits: 10, places: 2 }),
  status: fields.string({ maxLength: 20, default: 'active' }),
});
const orderTags = joinTable('orders', 'tags');

const orderSerializer = serializer(Order, {
  fields: ['id', 'total', 'active_total', 'items', 'avg_price', 'dearest', 'tag_weight'],
  computed: {
    // Django's annotate(total=Sum(F('quantity') * F('unit_price'), default=0))
    total: computed.sum(Line, 'order_id', { of: ['quantity', 'unit_price'], default: 0 }),
    active_total: computed.sum(Line, 'order_id', { of: ['quantity', 'unit_price'], where: { status: 'active' }, default: 0 }),
    items: computed.sum(Line, 'order_id', { of: 'quantity' }),
    avg_price: computed.avg(Line, 'order_id', { of: 'unit_price' }),
    dearest: computed.max(Line, 'order_id', { of: 'unit_price' }),
    // Over a many-to-many: the tags the join table links the order to.
    tag_weight: computed.sum(Tag, orderTags, { of: 'weight' }),
  },
});
// GET /api/v1/orders/7/ → {"id": 7, "total": "24.95", "active_total": "21.20", "items": 6,
//                          "avg_price": "3.98", "dearest": "10.50", "tag_weight": 7}
// #endregion aggregates

const Event = model('events', { id: fields.id(), title: fields.string({ maxLength: 100 }) });
const Seat = model('seats', {
  id: fields.id(),
  event_id: fields.foreignKey('events'),
  buyer_id: fields.foreignKey('users'),
  price: fields.decimal({ digits: 8, places: 2 }),
});

// #region visibility
const eventSerializer = serializer(Event, {
  fields: ['id', 'title', 'sold', 'bought', 'revenue'],
  computed: {
    sold: computed.count('seats', 'event_id', { visibility: 'all' }),       // every seat sold
    bought: computed.count('seats', 'event_id'),                           // the seats this viewer may see
    revenue: computed.sum(Seat, 'event_id', { of: 'price', default: 0, visibility: 'all' }),
  },
});
// seats are scoped to their buyer: GET /api/v1/events/7/ → {"sold": 3, "bought": 2, "revenue": "175.50"} for Alice,
//                                                          {"sold": 3, "bought": 1, "revenue": "175.50"} for Bob
// #endregion visibility

const Todo = model('todos', { id: fields.id(), title: fields.string({ maxLength: 200 }), completed: fields.boolean({ default: false }), owner_id: fields.foreignKey('users') });

// #region record-url
const people = serializer(User, { name: 'Person', fields: ['url', 'id', 'username'], computed: { url: computed.url() } });
const todos = collection('todos', {
  serializer: serializer(Todo, {
    fields: ['url', 'id', 'title', 'completed', 'owner'],
    computed: { url: computed.url() },
    nested: { owner: { source: 'owner_id', serializer: people } },
  }),
});
// GET /api/v1/todos/7/ → {"url": "https://api.example.com/api/v1/todos/7/", "id": 7, …,
//                          "owner": {"url": "https://api.example.com/api/v1/people/3/", "id": 3, "username": "alice"}}
// #endregion record-url

export default defineApp({
  collections: [
    collection('orders', { serializer: orderSerializer }),
    collection('lines', { serializer: serializer(Line, { fields: ['id', 'order_id', 'quantity', 'unit_price', 'status'], readOnly: ['id'] }) }),
    collection('tags', { serializer: serializer(Tag, { fields: ['id', 'name', 'weight'], readOnly: ['id'] }) }),
    // The same orders, to link them to tags.
    collection('order-tags', {
      serializer: serializer(Order, { name: 'OrderTags', fields: ['id', 'tags'], readOnly: ['id'], relations: { tags: relations.manyToMany(orderTags) } }),
    }),
    collection('events', { serializer: eventSerializer }),
    collection('seats', {
      serializer: serializer(Seat, { fields: ['id', 'event_id', 'price'], readOnly: ['id'] }),
      scope: ({ user }) => ({ buyer_id: user?.id ?? null }),
      hooks: { beforeCreate: ({ user }) => ({ buyer_id: user!.id }) },
      permissions: [isAuthenticated],
    }),
    todos,
    collection('people', { serializer: people, builtInActions: ['list', 'retrieve'] }),
  ],
});
