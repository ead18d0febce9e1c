/** The samples of docs/guides/collections-and-actions.md, as one app. */
import {
  collection,
  csvRenderer,
  defineApp,
  fields,
  hasPermission,
  isAuthenticated,
  model,
  recordStore,
  requirePermissions,
  serializer,
  throttleRequest,
  type FastifyInstance,
  type Renderer,
  type Row,
} from 'restfold';

const Snippet = model('snippets', { id: fields.id(), title: fields.string({ maxLength: 100 }), code: fields.text() });
const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const render = (snippet: Row): string => `<pre>${escape(String(snippet.code))}</pre>`;

// #region custom-actions
const snippets = collection('snippets', {
  serializer: serializer(Snippet, { fields: ['id', 'title', 'code'], readOnly: ['id'] }),
  actions: {
    highlight: { detail: true, method: 'GET', mediaType: 'text/html', summary: 'The snippet as HTML', handler: ({ record }) => render(record!) },
    publish: {
      detail: true,
      method: 'POST',
      permissions: [hasPermission('snippets.publish')],
      // Validated before the handler runs; it gets { channel, urgent } parsed, urgent false when not sent.
      body: { channel: fields.string({ maxLength: 50 }), urgent: fields.boolean({ default: false }) },
      handler: ({ record, body, reply }) => {
        const { channel, urgent } = body as { channel: string; urgent: boolean };
        reply.status(202);
        return { queued: record!.id, channel, urgent };
      },
    },
    recent: { detail: false, method: 'GET', handler: ({ user }) => ({ user: user?.username }) },
  },
});
// #endregion custom-actions

const Gizmo = model('gizmos', { id: fields.id(), name: fields.string({ maxLength: 50 }), starred: fields.boolean({ default: false }) });
const gizmoSerializer = serializer(Gizmo, { fields: ['id', 'name', 'starred'], readOnly: ['id'] });
const gizmos = collection('gizmos', {
  serializer: gizmoSerializer,
  actions: {
    // #region answers-record
    star: {
      detail: true, method: 'POST', body: false, answers: 'record',
      handler: async ({ record, database }) => {
        await recordStore(database, gizmoSerializer, { name: 'gizmo' }).updateMatching({ id: record!.id }, { starred: true });
        return record!.id;
      },
    },
    // #endregion answers-record
  },
});

const Product = model('products', { id: fields.id(), name: fields.string({ maxLength: 50 }), stock: fields.integer({ default: 0 }), owner_id: fields.foreignKey('users', { nullable: true }) });

// #region where-actions
const products = collection('products', {
  serializer: serializer(Product, { fields: ['id', 'name', 'stock'], readOnly: ['id'] }),
  actions: {
    'low-stock': { detail: false, method: 'GET', where: { stock__lt: 5 }, summary: 'Products running out' },
    // Conditions that depend on the caller: a function of { user, parameters }, which may answer later.
    mine: { detail: false, method: 'GET', where: ({ user }) => ({ owner_id: user?.id ?? null }) },
  },
});
// #endregion where-actions

const Article = model('articles', { id: fields.id(), title: fields.string({ maxLength: 200 }), body: fields.text() });
const articleSerializer = serializer(Article, { fields: ['id', 'title', 'body'], readOnly: ['id'] });
const articleListSerializer = serializer(Article, { name: 'ArticleListItem', fields: ['id', 'title'] });

// #region which-actions
const articles = collection('articles', {
  serializer: articleSerializer,                 // retrieve, create, update: the whole article
  serializers: { list: articleListSerializer }, // lists: without `body`
  builtInActions: ['list', 'retrieve', 'create', 'update', 'destroy'], // no PATCH
  put: 'partial',                                // PUT sends the fields it changes
  createStatus: 200,                             // 201 by default
});
// #endregion which-actions

const Todo = model('todos', { id: fields.id(), title: fields.string({ maxLength: 200 }), completed: fields.boolean({ default: false }), owner_id: fields.foreignKey('users') });
const todoSerializer = serializer(Todo, { fields: ['id', 'title', 'completed'], readOnly: ['id'] });
const Label = model('labels', { id: fields.id(), name: fields.string({ maxLength: 50 }), color: fields.string({ maxLength: 20 }) });
const labelSerializer = serializer(Label, { fields: ['id', 'name', 'color'], readOnly: ['id'] });

// #region bulk-delete
const todos = collection('todos', {
  serializer: todoSerializer,
  filterFields: ['completed'],
  scope: ({ user }) => ({ owner_id: user?.id ?? null }),
  bulkDelete: 'all',          // DELETE /todos/ deletes all the caller's todos; DELETE /todos/?completed=true the completed ones
});
const labels = collection('labels', { serializer: labelSerializer, filterFields: ['color'], bulkDelete: 'filtered' });  // DELETE /labels/ alone is a 400
// #endregion bulk-delete

const Order = model('orders', { id: fields.id(), reference: fields.string({ maxLength: 20 }), total: fields.decimal({ digits: 10, places: 2 }) });
const orderSerializer = serializer(Order, { fields: ['id', 'reference', 'total'], readOnly: ['id'] });

// #region renderers
const ndjson: Renderer = {
  mediaType: 'application/x-ndjson',
  format: 'ndjson',
  lists: 'all',
  async *render({ body, records }) {
    if (!records) return yield `${JSON.stringify(body)}\n`; // a record, a page, a custom action's answer
    for await (const record of records) yield `${JSON.stringify(record)}\n`;
  },
};

const orders = collection('orders', { serializer: orderSerializer, renderers: [csvRenderer, ndjson] });
// #endregion renderers

const Post = model('posts', { id: fields.id(), title: fields.string({ maxLength: 200 }), owner_id: fields.foreignKey('users') });
const Comment = model('comments', { id: fields.id(), body: fields.text(), post_id: fields.foreignKey('posts') });
const postSerializer = serializer(Post, { fields: ['id', 'title'], readOnly: ['id'] });

// #region nested
const posts = collection('posts', {
  serializer: postSerializer,
  scope: ({ user }) => ({ owner_id: user?.id ?? null }),
  hooks: { beforeCreate: ({ user }) => ({ owner_id: user!.id }) },
});
const comments = collection('comments', {
  serializer: serializer(Comment, { fields: ['id', 'body', 'post_id'], readOnly: ['post_id'] }),
  parent: { collection: posts, field: 'post_id' },
});
// #endregion nested

const Member = model('members', { id: fields.id(), username: fields.string({ maxLength: 50 }), email: fields.email(), bio: fields.text({ blank: true, default: '' }) });

// #region singleton
const me = collection('me', {
  serializer: serializer(Member, { fields: ['id', 'username', 'email', 'bio'], readOnly: ['id'] }),
  singleton: ({ user }) => user?.id,
  permissions: [isAuthenticated],
});
// #endregion singleton

const Magazine = model('magazines', { id: fields.id(), title: fields.string({ maxLength: 200 }), summary: fields.text({ blank: true, default: '' }) });

export default defineApp({
  collections: [snippets, gizmos, products, articles, todos, labels, orders, posts, comments, me, collection('magazines', { serializer: serializer(Magazine, { fields: ['id', 'title', 'summary'], readOnly: ['id'] }) })],
  // #region routes
  routes: (app: FastifyInstance) => {
    app.get('/reports/summary', async (request, reply) => {
      await requirePermissions(request, [hasPermission('reports.view')]);   // 401 anonymous, 403 without
      await throttleRequest(request, reply, 'reports');                    // 429 with Retry-After over the rate
      return { for: request.user!.username };
    });
  },
  // #endregion routes
});
