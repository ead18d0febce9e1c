/**
 * A small shop on Restfold: products by SKU with a stock that never goes below zero, orders that
 * belong to their customer, and order lines that take their quantity from the stock as they are
 * made. Right under any concurrency on both databases, with no SQL of its own: the stock is taken by
 * one conditional update, restocks add up, and an order's total is summed in SQL when it is read.
 * Serve it with `npx restfold serve --app examples/shop/app.ts`; see ./README.md.
 */
import {
  collection,
  computed,
  defineApp,
  fields,
  hasPermission,
  increment,
  isAuthenticated,
  model,
  notFound,
  recordStore,
  relations,
  serializer,
  validationFailed,
  type Database,
  type RecordStore,
  type Row,
} from 'restfold';

const Product = model(
  'products',
  {
    id: fields.id(),
    sku: fields.slug({ maxLength: 32, unique: true }),
    name: fields.string({ maxLength: 200 }),
    price: fields.decimal({ digits: 10, places: 2, minValue: 0 }),
    stock: fields.integer({ default: 0, minValue: 0 }),
    status: fields.choice(['draft', 'active', 'retired'], { default: 'draft' }),
    // A photo, uploaded as multipart/form-data; the bytes live in FILES_STORAGE, never in the row.
    image: fields.image({ maxBytes: 5 * 1024 * 1024, maxWidth: 4000, maxHeight: 4000, nullable: true }),
  },
  {
    // Held by the database whatever writes the row: an order line's atomic decrement included.
    constraints: [
      { name: 'products_stock_not_negative', check: { stock__gte: 0 }, field: 'stock', message: 'Stock cannot go below zero.' },
      { name: 'products_price_not_negative', check: { price__gte: 0 }, field: 'price', message: 'Price cannot be negative.' },
    ],
  },
);

const Order = model('orders', {
  id: fields.id(),
  customer_id: fields.foreignKey('users'),
  created_at: fields.timestamp({ default: () => new Date() }),
});

const Line = model('lines', {
  id: fields.id(),
  order_id: fields.foreignKey('orders'),
  // A product with lines is never deleted from under them.
  product_id: fields.foreignKey('products', { onDelete: 'restrict' }),
  quantity: fields.integer({ minValue: 1 }),
  unit_price: fields.decimal({ digits: 10, places: 2 }),
});

// ---- products -----------------------------------------------------------------------------------

const productSerializer = serializer(Product, { fields: ['sku', 'name', 'price', 'stock', 'status', 'image'], search: ['name', 'sku'] });
const products = (database: Database): RecordStore => recordStore(database, productSerializer, { name: 'product' });

const managers = [hasPermission('shop.manage')];
/** Below this many in stock, a product is listed at /products/low-stock/. */
const LOW_STOCK = 5;

const productCollection = collection('products', {
  serializer: productSerializer,
  recordKey: 'sku',
  // Reads are any signed-in user's (the API's default); writes need shop.manage. A product that
  // order lines name is retired rather than deleted (its delete is refused).
  permissions: { create: managers, update: managers, partial_update: managers, destroy: managers },
  filterFields: ['price', 'stock', 'status'],
  orderingFields: ['sku', 'name', 'price', 'stock'],
  defaultOrdering: ['sku'],
  actions: {
    // A page of the list, its filters, ordering and pagination included.
    'low-stock': { detail: false, method: 'GET', where: { stock__lt: LOW_STOCK }, summary: `Products with fewer than ${LOW_STOCK} in stock.` },
    restock: {
      detail: true,
      method: 'POST',
      body: { quantity: fields.integer({ minValue: 1 }) },
      permissions: [hasPermission('shop.restock')],
      summary: 'Adds to the stock; concurrent restocks add up.',
      handler: async ({ database, record, body }) => {
        const store = products(database);
        await store.updateMatching({ sku: record!.sku }, { stock: increment((body as { quantity: number }).quantity) });
        return store.get(record!.id as number);
      },
    },
  },
});

// ---- orders -------------------------------------------------------------------------------------

const orderSerializer = serializer(Order, {
  fields: ['id', 'customer_id', 'created_at', 'total'],
  rename: { customer_id: 'customer' },
  readOnly: ['customer_id', 'created_at'],
  // Django's annotate(total=Sum(F('quantity') * F('unit_price'), default=0)): read with the order, never stored.
  computed: { total: computed.sum(Line, 'order_id', { of: ['quantity', 'unit_price'], default: 0 }) },
});

const orderCollection = collection('orders', {
  serializer: orderSerializer,
  builtInActions: ['list', 'retrieve', 'create'],
  permissions: [isAuthenticated],
  // A customer reaches only their own orders (another's is 404); shop.view_all_orders reaches every one.
  scope: async ({ user }) => ((await user?.hasPermission('shop.view_all_orders')) ? {} : { customer_id: user?.id ?? null }),
  hooks: { beforeCreate: ({ user }) => ({ customer_id: user!.id }) },
  orderingFields: ['created_at', 'total'],
  defaultOrdering: ['-id'],
});

// ---- order lines --------------------------------------------------------------------------------

const orders = (database: Database): RecordStore => recordStore(database, serializer(Order, { name: 'OrderOwner', fields: ['id', 'customer_id'] }), { name: 'order' });

/**
 * Takes `quantity` of the product `sku` from its stock by one conditional update, in the line's own
 * transaction: of any number of concurrent lines, as many as the stock allows are made, and a line
 * refused later gives its quantity back by rolling back. Answers the unit price the line keeps
 * (nothing for an unknown SKU, which the line's `product` then refuses).
 */
async function takeStock(database: Database, sku: unknown, quantity: number): Promise<Row> {
  const store = products(database);
  const taken = await store.updateMatching({ sku, status: 'active', stock__gte: quantity }, { stock: increment(-quantity) });
  const [product] = await store.list({ sku }, []);
  if (!product) return {};
  if (taken === 0 && product.status !== 'active') throw validationFailed({ product: ['This product is not for sale.'] });
  if (taken === 0) throw validationFailed({ quantity: [`Only ${String(product.stock)} in stock.`] });
  return { unit_price: product.price };
}

const lineCollection = collection('lines', {
  serializer: serializer(Line, {
    fields: ['id', 'product', 'quantity', 'unit_price'],
    readOnly: ['order_id', 'unit_price'],
    relations: { product: relations.slug('product_id', Product, 'sku') },
  }),
  parent: { collection: orderCollection, field: 'order_id' },
  // A line is final: a return would be an action of its own, giving the stock back.
  builtInActions: ['list', 'retrieve', 'create'],
  permissions: [isAuthenticated],
  hooks: {
    // The stock taken commits or rolls back with the line.
    inTransaction: true,
    async beforeCreate({ database, values, user }) {
      // Seeing every order (shop.view_all_orders) is not buying for its customer.
      const order = await orders(database).get(values.order_id as number);
      if (order.customer_id !== user!.id) throw notFound('Not found.');
      // `product` is the SKU the client sent.
      return takeStock(database, values.product, values.quantity as number);
    },
  },
  defaultOrdering: ['id'],
});

export default defineApp({
  collections: [productCollection, orderCollection, lineCollection],
  // Generated from the declarations above by `npx restfold makemigrations --app examples/shop/app.ts`
  // into ./migrations/, where every command finds them.
});
