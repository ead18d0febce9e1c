/**
 * PostgREST's "todo" tutorial on Restfold: a todo list where each signed-in user sees and edits
 * only their own todos. Another user's todo is not found (404) and absent from every list.
 * Serve it with `npx restfold serve --app examples/todos/app.ts`; see ./README.md.
 */
import { collection, defineApp, fields, isAuthenticated, model, serializer } from 'restfold';

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
  defaultOrdering: ['due'],
});

export default defineApp({
  collections: [todos],
  migrations: {
    '0001_todos': async (db, types) => {
      await db.schema
        .createTable('todos')
        .addColumn('id', types.id, types.idColumn)
        .addColumn('task', 'text', (column) => column.notNull())
        .addColumn('done', types.boolean, (column) => column.notNull().defaultTo(types.booleanValue(false)))
        .addColumn('due', types.timestamp)
        .addColumn('owner_id', types.id, (column) => column.notNull().references('users.id').onDelete('cascade'))
        .execute();
      // Every query of the collection is scoped by owner: the index serves each one.
      await db.schema.createIndex('todos_owner_id_due_idx').on('todos').columns(['owner_id', 'due']).execute();
    },
  },
});
