/** The samples of docs/guides/models-and-migrations.md, as one app. */
import { collection, defineApp, fields, model, serializer } from 'restfold';

const productFields = {
  id: fields.id(),
  sku: fields.string({ maxLength: 20 }),
  status: fields.choice(['live', 'retired'], { default: 'live' }),
  stock: fields.integer({ default: 0 }),
  available_from: fields.date({ nullable: true }),
  available_until: fields.date({ nullable: true }),
};

// #region constraints
const Product = model('products', productFields, {
  constraints: [
    // CheckConstraint(check=Q(stock__gte=0), violation_error_message=...)
    { name: 'products_stock_not_negative', check: { stock__gte: 0 }, field: 'stock', message: 'Stock cannot go below zero.' },
    // start <= end: { field: '…' } is another field of the same row (Django's F())
    { name: 'products_window_in_order', check: { available_from__lte: { field: 'available_until' } }, message: 'The window ends before it starts.' },
    // UniqueConstraint(fields=['sku'], condition=~Q(status='retired'))
    { name: 'products_live_sku_key', unique: ['sku'], condition: { not: { status: 'retired' } }, message: 'A live product with this SKU already exists.' },
  ],
});
// #endregion constraints

const products = collection('products', {
  serializer: serializer(Product, { fields: ['id', 'sku', 'status', 'stock', 'available_from', 'available_until'], readOnly: ['id'] }),
});

// #region record-key
const Article = model('articles', { id: fields.id(), slug: fields.string({ maxLength: 80, unique: true }), title: fields.string() });
const articles = collection('articles', { serializer: serializer(Article, { fields: ['id', 'slug', 'title'] }), recordKey: 'slug' });
// GET /api/v1/articles/hello-world/   PATCH, PUT, DELETE likewise; custom detail actions at /articles/hello-world/<action>/
// #endregion record-key

// #region uuid-key
const Doc = model('docs', { id: fields.uuid({ primaryKey: true }), title: fields.string() });
const Page = model('pages', { id: fields.id(), doc_id: fields.foreignKey(Doc), body: fields.text() });
// #endregion uuid-key

export default defineApp({
  collections: [
    products,
    articles,
    collection('docs', { serializer: serializer(Doc, { fields: ['id', 'title'], readOnly: ['id'] }) }),
    collection('pages', { serializer: serializer(Page, { fields: ['id', 'doc_id', 'body'], readOnly: ['id'] }) }),
  ],
});
