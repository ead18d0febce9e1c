/**
 * Surface B: the fixed posts API under /api/posts (no version, no trailing
 * slash, no pagination, no authentication), with plain-text errors.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  fields,
  model,
  mountSimpleRoutes,
  parseRecordId,
  readJsonBody,
  recordStore,
  serializer,
  type AppContext,
  type Migrations,
} from '../framework/index.js';

export const Post = model('posts', {
  id: fields.id(),
  title: fields.string({ maxLength: 200 }),
  content: fields.text(),
  published: fields.boolean({ default: false }),
  created_at: fields.timestamp(),
  updated_at: fields.timestamp(),
});

export const postSerializer = serializer(Post, {
  fields: ['id', 'title', 'content', 'published', 'created_at', 'updated_at'],
  readOnly: ['id', 'created_at', 'updated_at'],
});

export const postMigrations: Migrations = {
  '0002_posts': async (db, types) => {
    await db.schema
      .createTable('posts')
      .addColumn('id', types.id, types.idColumn)
      .addColumn('title', 'varchar(200)', (column) => column.notNull())
      .addColumn('content', 'text', (column) => column.notNull())
      .addColumn('published', types.boolean, (column) => column.notNull())
      .addColumn('created_at', types.timestamp, (column) => column.notNull())
      .addColumn('updated_at', types.timestamp, (column) => column.notNull())
      .execute();
    // The list: published posts, newest first, ties by id.
    await db.schema.createIndex('posts_published_created_at_idx').on('posts').columns(['published', 'created_at', 'id']).execute();
  },
};

const idOf = (request: FastifyRequest): ReturnType<typeof parseRecordId> =>
  parseRecordId((request.params as { id: string }).id, 'post');

export function postRoutes(app: FastifyInstance, { database }: AppContext): Promise<void> {
  // Unknown body fields are dropped: the body's known fields are applied over the record.
  const posts = recordStore(database, postSerializer, { name: 'post', unknownFields: 'ignore' });
  return mountSimpleRoutes(app, database, '/api/posts', {
    '/': {
      GET: () => posts.list({ published: true }, ['-created_at', '-id']),
      POST: async (request, reply) => {
        const now = new Date();
        const post = await posts.create(readJsonBody(request), { created_at: now, updated_at: now });
        return reply.status(201).send(post);
      },
    },
    '/:id': {
      GET: (request) => posts.get(idOf(request)),
      PUT: (request) => posts.update(idOf(request), () => readJsonBody(request), { updated_at: new Date() }),
      DELETE: async (request, reply) => {
        await posts.delete(idOf(request));
        return reply.status(204).send();
      },
    },
  });
}
