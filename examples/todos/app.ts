/**
 * PostgREST's "todo" tutorial on Restfold: a todo list where each signed-in user sees and edits
 * only their own todos. Another user's todo is not found (404) and absent from every list.
 * Serve it with `npx restfold serve --app examples/todos/app.ts`; see ./README.md.
 */
import { collection, defineApp, fields, isAuthenticated, model, serializer } from 'restfold';
import migrations from './migrations/index.js';

const Todo = model('todos', {
  id: fields.id(),
  task: fields.text(),
  done: fields.boolean({ default: false }),
  due: fields.timestamp({ nullable: true }),
  owner_id: fields.foreignKey('users'),
});

const todos = collection('todos', {
  serializer: serializer(Todo, { fields: ['id', 'task', 'done', 'due'], readOnly: ['id'], search: ['task'] }),
  // Row-level security: every read and write of a todo is limited to the requesting user's.
  scope: ({ user }) => ({ owner_id: user?.id ?? null }),
  // The owner is the server's to set, never the client's.
  hooks: { beforeCreate: ({ user }) => ({ owner_id: user!.id }) },
  permissions: [isAuthenticated],
  filterFields: ['done', 'due'],
  orderingFields: ['due', 'task'],
  // Every query of the collection is scoped by owner: this index serves each one.
  indexes: [{ columns: ['owner_id', 'due'] }],
  defaultOrdering: ['due'],
});

export default defineApp({
  collections: [todos],
  // Generated from the declarations above by `npx restfold makemigrations --app examples/todos/app.ts`.
  migrations,
});
