/**
 * Django REST Framework's tutorial (parts 1–6, https://www.django-rest-framework.org/tutorial/1-serialization/)
 * on Restfold: code snippets owned by their author, the users with their snippets' ids, IsOwnerOrReadOnly,
 * the `highlight` action answering HTML, pagination. Serve it with
 * `npx restfold serve --app examples/snippets/app.ts`; see ./README.md.
 */
import {
  anyOf,
  collection,
  defineApp,
  fields,
  isOwner,
  model,
  readActions,
  relations,
  serializer,
  User,
  type Action,
  type Permission,
  type Row,
} from 'restfold';
import migrations from './migrations/index.js';

/** The tutorial takes its lists from Pygments; these few stand in for them (a `choice` kind is issue 22's). */
export const LANGUAGES = ['python', 'javascript', 'typescript', 'sql', 'bash', 'text'] as const;
export const STYLES = ['friendly', 'monokai', 'emacs', 'default'] as const;
const oneOf = (choices: readonly string[]) => ({ pattern: new RegExp(`^(${choices.join('|')})$`), patternMessage: `Choose one of: ${choices.join(', ')}.` });

const Snippet = model('snippets', {
  id: fields.id(),
  created: fields.timestamp({ default: () => new Date() }),
  title: fields.string({ maxLength: 100, blank: true, default: '' }),
  code: fields.text(),
  linenos: fields.boolean({ default: false }),
  language: fields.string({ maxLength: 20, default: 'python', ...oneOf(LANGUAGES) }),
  style: fields.string({ maxLength: 20, default: 'friendly', ...oneOf(STYLES) }),
  owner_id: fields.foreignKey('users'),
});

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character]!);

/**
 * The snippet as an HTML page. The tutorial highlights with Pygments; there is none here, so the
 * code is shown escaped in a `<pre>`, with line numbers when `linenos` is set, its language and
 * style named as classes for a style sheet to colour.
 */
export function highlighted(snippet: Row): string {
  const lines = String(snippet.code).split('\n');
  const width = String(lines.length).length;
  const body = lines.map((line, index) => (snippet.linenos ? `${String(index + 1).padStart(width)}  ` : '') + escapeHtml(line)).join('\n');
  const title = escapeHtml(String(snippet.title) || 'Snippet');
  const classes = `highlight language-${String(snippet.language)} style-${String(snippet.style)}`;
  return `<!doctype html>\n<html><head><meta charset="utf-8"><title>${title}</title></head>\n<body><h2>${title}</h2>\n<pre class="${classes}">${body}</pre></body></html>\n`;
}

/** Anyone may read; only a signed-in user may create, and only the owner change or delete (IsAuthenticatedOrReadOnly, IsOwnerOrReadOnly). */
const isAuthenticatedOrReadOnly: Permission = {
  description: 'anyone reading, an authenticated user writing',
  hasPermission: ({ user, action }) => readActions.has(action) || user !== null,
};
const readOnly: Permission = { description: 'reading only', hasPermission: ({ action }) => readActions.has(action) };
const isOwnerOrReadOnly = anyOf(readOnly, isOwner('owner_id'));

const owner = serializer(User, { name: 'SnippetOwner', fields: ['username'] });

const snippets = collection('snippets', {
  serializer: serializer(Snippet, {
    fields: ['id', 'created', 'owner', 'title', 'code', 'linenos', 'language', 'style'],
    readOnly: ['created'],
    nested: { owner: { source: 'owner_id', serializer: owner } },
    // The tutorial's `owner = ReadOnlyField(source='owner.username')`: the username, not an object.
    format: { owner: (stored) => (stored as Row | null)?.username ?? null },
  }),
  permissions: [isAuthenticatedOrReadOnly, isOwnerOrReadOnly],
  // `perform_create`: the owner is the requesting user, whatever the body says.
  hooks: { beforeCreate: ({ user }) => ({ owner_id: user!.id }) },
  defaultOrdering: ['created'],
  pageSize: 10,
  actions: {
    highlight: { detail: true, method: 'GET', mediaType: 'text/html', summary: 'The snippet as an HTML page', handler: ({ record }) => highlighted(record!) },
  },
});

const readOnlyActions: Partial<Record<Action, Permission[]>> = { create: [readOnly], update: [readOnly], partial_update: [readOnly], destroy: [readOnly] };

const users = collection('users', {
  serializer: serializer(User, { fields: ['id', 'username', 'snippets'], relations: { snippets: relations.reverse('snippets', 'owner_id') } }),
  permissions: { list: [], retrieve: [], ...readOnlyActions },
  pageSize: 10,
});

export default defineApp({
  collections: [snippets, users],
  // Generated from the declarations above by `npx restfold makemigrations --app examples/snippets/app.ts`.
  migrations,
});
