/** A model for tests of per-user records: notes, each owned by the user who wrote it. */
import { fields, model } from '../../src/framework/index.js';

export const Note = model('notes', {
  id: fields.id(),
  text: fields.string({ maxLength: 100 }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
