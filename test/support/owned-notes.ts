/** A model for tests of per-user records: notes, each owned by the user who wrote it. */
import { fields, model, type Migrations } from '../../src/framework/index.js';

export const Note = model('notes', {
  id: fields.id(),
  text: fields.string({ maxLength: 100 }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});

export const noteMigrations: Migrations = {
  '0001_notes': async (db, types) => {
    await db.schema
      .createTable('notes')
      .addColumn('id', types.id, types.idColumn)
      .addColumn('text', 'varchar(100)', (column) => column.notNull())
      .addColumn('owner_id', types.id, (column) => column.notNull().references('users.id'))
      .execute();
    await db.schema.createIndex('notes_owner_id_idx').on('notes').column('owner_id').execute();
  },
};
