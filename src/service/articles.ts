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
  // SPEC: a string filter value longer than 200 characters is 400 (an app's filters take any value the field holds).
  maxFilterLength: 200,
  bulkCreate: { max: 100 },
  // `/articles/events/`: any user who may list the articles may follow their changes live.
  live: true,
  countModes: ['estimated', 'none'],
  // One author's articles, newest first, ties by id as the list query breaks them: the page is read in
  // index order and the count is an index-only scan of the filtered part (docs/performance.md).
  indexes: [{ name: 'articles_author_id_created_at_idx', columns: ['author_id', 'created_at desc', 'id'] }],
  permissions: {
    list: [isAuthenticated],
    retrieve: [isAuthenticated],
    create: [isAuthenticated],
    update: authorOr('articles.change'),
    partial_update: authorOr('articles.change'),
    destroy: authorOr('articles.delete'),
  },
});
