/** The samples of docs/guides/consistency.md, as one app. */
import {
  F,
  collection,
  defineApp,
  fields,
  increment,
  lockFor,
  model,
  permissionDenied,
  recordStore,
  serializer,
  validationFailed,
  type Database,
  type Row,
} from 'restfold';

const Log = model('log_lines', { id: fields.id(), line: fields.text() });
const logSerializer = serializer(Log, { fields: ['id', 'line'], readOnly: ['id'] });

const Article = model('articles', {
  id: fields.id(),
  title: fields.string({ maxLength: 200 }),
  slug: fields.string({ maxLength: 220, unique: true }),
  locked: fields.boolean({ default: false }),
  owner_id: fields.foreignKey('users'),
});
const articleSerializer = serializer(Article, { fields: ['id', 'title', 'slug', 'locked'], readOnly: ['id', 'slug'] });

const slugify = (title: unknown): string => String(title).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'untitled';

/** The first of `base`, `base-2`, `base-3`, … that no article has. */
async function freeSlug(database: Database, base: string): Promise<string> {
  const taken = new Set((await recordStore(database, articleSerializer, { name: 'article' }).list({ slug__startswith: base }, ['id'])).map((row) => row.slug));
  let slug = base;
  for (let n = 2; taken.has(slug); n++) slug = `${base}-${n}`;
  return slug;
}

/** Where an app would tell the world (a queue, a webhook): here, the log. */
const told: string[] = [];
const notify = (action: string, record: Row | undefined): void => void told.push(`${action} ${record?.id}`);

const articles = collection('articles', {
  serializer: articleSerializer,
  // #region hooks
  hooks: {
    beforeCreate: async ({ user, values, database }) => ({ owner_id: user!.id, slug: await freeSlug(database, slugify(values.title)) }),
    beforeUpdate: ({ existing }) => { if (existing.locked) throw permissionDenied('Locked.'); },
    beforeDelete: () => { /* throw an ApiError to refuse */ },
    afterCreate: async ({ record, database }) => { await recordStore(database, logSerializer, { name: 'line' }).create({ line: `created ${record.id}` }); },
    afterUpdate: () => { /* … */ },
    afterDelete: () => { /* … */ },
    afterCommit: ({ action, record }) => notify(action, record),
  },
  // #endregion hooks
});

const Posting = model('postings', { id: fields.id(), title: fields.string({ maxLength: 200 }), slug: fields.string({ maxLength: 220, unique: true }) });
const postingSerializer = serializer(Posting, { name: 'PostingRow', fields: ['id', 'slug'] });
const postings = collection('postings', {
  serializer: serializer(Posting, { fields: ['id', 'title', 'slug'], readOnly: ['id', 'slug'] }),
  // #region named-lock
  hooks: {
    inTransaction: true, // the lock is held until the posting commits
    async beforeCreate({ database, values }) {
      const base = slugify(values.title);
      await lockFor(database, `postings.slug ${base}`);
      const taken = new Set((await recordStore(database, postingSerializer, { name: 'posting' }).list({ slug__startswith: base }, ['id'])).map((row) => row.slug));
      let slug = base;
      for (let n = 2; taken.has(slug); n++) slug = `${base}-${n}`; // title, title-2, … : reads what the writes before it stored
      return { slug };
    },
  },
  // #endregion named-lock
});

const Product = model('products', {
  id: fields.id(),
  sku: fields.string({ maxLength: 20 }),
  stock: fields.integer({ default: 0 }),
  sold: fields.integer({ default: 0 }),
});
const productSerializer = serializer(Product, { fields: ['id', 'sku', 'stock', 'sold'], readOnly: ['id'] });
const Line = model('lines', { id: fields.id(), product_id: fields.foreignKey('products'), quantity: fields.integer({ minValue: 1 }) });
const lineSerializer = serializer(Line, { fields: ['id', 'product_id', 'quantity'], readOnly: ['id'] });

// #region atomic-update
const lines = collection('lines', {
  serializer: lineSerializer,
  hooks: {
    inTransaction: true, // the decrement commits or rolls back with the line
    async beforeCreate({ database, values }) {
      const q = values.quantity as number;
      const taken = await recordStore(database, productSerializer, { name: 'product' })
        .updateMatching({ id: values.product_id, stock__gte: q }, { stock: increment(-q), sold: F('sold').plus(q) });
      if (taken === 0) throw validationFailed({ quantity: ['Not enough stock.'] });
    },
  },
});
// #endregion atomic-update

export default defineApp({
  collections: [
    articles,
    postings,
    collection('products', { serializer: productSerializer }),
    lines,
    collection('log', { serializer: logSerializer, builtInActions: ['list'] }),
  ],
});
