/** The example service: what `npm start` serves. Built only on the framework's public API. */
import { defineApp } from '../framework/index.js';
import { articleMigrations, articles } from './articles.js';
import { indexMigrations } from './indexes.js';
import { postMigrations, postRoutes } from './posts.js';
import { users } from './users.js';

export default defineApp({
  collections: [users, articles],
  migrations: { ...articleMigrations, ...postMigrations, ...indexMigrations },
  routes: postRoutes,
  // Surface B takes no credentials: a bad one is ignored, not refused (SPEC §4).
  authenticateRoutes: false,
});
