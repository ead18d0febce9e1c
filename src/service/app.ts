/** The example service: what `npm start` serves. Built only on the framework's public API. */
import { defineApp, modelAdmin } from '../framework/index.js';
import { articles } from './articles.js';
import migrations from './migrations/index.js';
import { Post, postRoutes } from './posts.js';
import { tags } from './tags.js';
import { users } from './users.js';

export default defineApp({
  collections: [users, articles, tags],
  // The admin at /admin/ (docs/admin.md): the articles' list narrowed to what staff scan, their
  // author picked by searching the users; users and tags as their serializers show them.
  admin: {
    collections: [
      modelAdmin(articles, { columns: ['title', 'author_id', 'created_at', 'id'], filters: ['author_id'] }),
      users,
      tags,
    ],
  },
  models: [Post],
  // Generated from the declarations by `restfold makemigrations` (docs/guides/models-and-migrations.md).
  migrations,
  routes: postRoutes,
  // Surface B takes no credentials: a bad one is ignored, not refused (SPEC §4).
  authenticateRoutes: false,
});
