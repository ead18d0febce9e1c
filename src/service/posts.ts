/**
 * Surface B: the fixed posts API under /api/posts (no version, no trailing
 * slash, no pagination, no authentication), with plain-text errors.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  ANONYMOUS,
  fields,
  inputSchema,
  model,
  mountSimpleRoutes,
  parseRecordId,
  readJsonBody,
  recordSchema,
  recordStore,
  sendJsonArray,
  serializer,
  textErrorResponses,
  type AppContext,
} from '../framework/index.js';

export const Post = model('posts', {
  id: fields.id(),
  title: fields.string({ maxLength: 200 }),
  // Bounded, so that one post (and the list that carries it) stays small (docs/contract.md, the posts API).
  content: fields.text({ maxLength: 100_000 }),
  published: fields.boolean({ default: false }),
  created_at: fields.timestamp(),
  updated_at: fields.timestamp(),
}, {
  // The list: published posts, newest first, ties by id.
  indexes: [{ name: 'posts_published_created_at_idx', columns: ['published', 'created_at', 'id'] }],
});

const postSerializer = serializer(Post, {
  fields: ['id', 'title', 'content', 'published', 'created_at', 'updated_at'],
  readOnly: ['id', 'created_at', 'updated_at'],
});

const post = recordSchema(postSerializer);
// The body's known fields are applied over the record; others are ignored, so any property is allowed.
const body = (mode: 'create' | 'partial_update') => ({ ...inputSchema(postSerializer, mode), additionalProperties: true });
const idParams = { type: 'object', properties: { id: { type: 'integer', description: 'A 64-bit integer.' } }, required: ['id'] };
const documented = (operationId: string, summary: string, schema: Record<string, unknown>) => ({ tags: ['posts'], summary, operationId, ...ANONYMOUS, ...schema });

const idOf = (request: FastifyRequest): ReturnType<typeof parseRecordId> =>
  parseRecordId((request.params as { id: string }).id, 'post');

export function postRoutes(app: FastifyInstance, { database }: AppContext): Promise<void> {
  // Unknown body fields are dropped: the body's known fields are applied over the record.
  const posts = recordStore(database, postSerializer, { name: 'post', unknownFields: 'ignore' });
  return mountSimpleRoutes(app, database, '/api/posts', {
    '/': {
      GET: {
        schema: documented('postsList', 'Published posts, newest first', {
          response: { 200: { description: 'Every published post', type: 'array', items: post }, ...textErrorResponses([503]) },
        }),
        // Streamed from the database: however many posts there are, the process holds a few batches.
        handler: async (_request, reply) => sendJsonArray(reply, posts.each({ published: true }, ['-created_at', '-id'])),
      },
      POST: {
        schema: documented('postsCreate', 'Create a post', {
          body: body('create'),
          response: { 201: { description: 'The created post', ...post }, ...textErrorResponses([400, 413, 429, 503]) },
        }),
        throttle: 'posts',
        handler: async (request, reply) => {
          const now = new Date();
          const created = await posts.create(readJsonBody(request), { created_at: now, updated_at: now });
          return reply.status(201).send(created);
        },
      },
    },
    '/:id': {
      GET: {
        schema: documented('postsRetrieve', 'A post', {
          params: idParams,
          response: { 200: { description: 'The post', ...post }, ...textErrorResponses([400, 404, 503]) },
        }),
        handler: (request) => posts.get(idOf(request)),
      },
      PUT: {
        schema: documented('postsUpdate', 'Update a post: the body\'s fields over the stored ones', {
          params: idParams,
          body: body('partial_update'),
          response: { 200: { description: 'The updated post', ...post }, ...textErrorResponses([400, 404, 413, 429, 503]) },
        }),
        throttle: 'posts',
        handler: (request) => posts.update(idOf(request), () => readJsonBody(request), { updated_at: new Date() }),
      },
      DELETE: {
        schema: documented('postsDestroy', 'Delete a post', {
          params: idParams,
          response: { 204: { description: 'Deleted', type: 'null' }, ...textErrorResponses([400, 404, 503]) },
        }),
        handler: async (request, reply) => {
          await posts.delete(idOf(request));
          return reply.status(204).send();
        },
      },
    },
  });
}
