/** The `articles` collection: written by users, shown with a nested author. */
import {
  anyOf,
  collection,
  fields,
  hasPermission,
  isAuthenticated,
  isOwner,
  model,
  serializer,
  type Migrations,
} from '../framework/index.js';
import { userSummarySerializer } from './users.js';

export const Article = model('articles', {
  id: fields.id(),
  title: fields.string({ maxLength: 200 }),
  body: fields.text({ blank: true, default: '' }),
  // Nobody files an article under another user's name, save an editor.
  author_id: fields.foreignKey('users', { default: ({ userId }) => userId, requestingUserOnly: { unless: 'articles.change' } }),
  created_at: fields.timestamp({ default: () => new Date() }),
});

export const articleMigrations: Migrations = {
  '0001_articles': async (db, types) => {
    await db.schema
      .createTable('articles')
      .addColumn('id', types.id, types.idColumn)
      .addColumn('title', 'varchar(200)', (column) => column.notNull())
      .addColumn('body', 'text', (column) => column.notNull().defaultTo(''))
      .addColumn('author_id', types.id, (column) => column.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', types.timestamp, (column) => column.notNull())
      .execute();
    for (const column of ['title', 'author_id', 'created_at']) {
      await db.schema.createIndex(`articles_${column}_idx`).on('articles').column(column).execute();
    }
  },
};

const authorOr = (permission: string) => [anyOf(hasPermission(permission), isOwner('author_id'))];

export const articles = collection('articles', {
  serializer: serializer(Article, {
    fields: ['id', 'title', 'body', 'author', 'author_id', 'created_at'],
    readOnly: ['id', 'created_at'],
    search: ['title', 'body'],
    nested: { author: { source: 'author_id', serializer: userSummarySerializer } },
  }),
  filterFields: ['author_id', 'title', 'created_at'],
  orderingFields: ['created_at', 'title'],
  bulkCreate: { max: 100 },
  countModes: ['estimated', 'none'],
  permissions: {
    list: [isAuthenticated],
    retrieve: [isAuthenticated],
    create: [isAuthenticated],
    update: authorOr('articles.change'),
    partial_update: authorOr('articles.change'),
    destroy: authorOr('articles.delete'),
  },
});
