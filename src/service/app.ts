/** The example service: what `npm start` serves. Built only on the framework's public API. */
import { defineApp } from '../framework/index.js';
import { articles } from './articles.js';
import migrations from './migrations/index.js';
import { Post, postRoutes } from './posts.js';
import { tags } from './tags.js';
import { users } from './users.js';

export default defineApp({
  collections: [users, articles, tags],
  models: [Post],
  // Generated from the declarations by `restfold makemigrations` (docs/guides/models-and-migrations.md).
  migrations,
  routes: postRoutes,
  // Surface B takes no credentials: a bad one is ignored, not refused (SPEC §4).
  authenticateRoutes: false,
});
