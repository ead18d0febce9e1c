/** The admin's file tests' collection: a title, a bounded image and a PDF, both nullable (each can be cleared). */
import { collection, fields, model, serializer } from '../../src/framework/index.js';

const Poster = model('posters', {
  id: fields.id(),
  title: fields.string({ maxLength: 100 }),
  picture: fields.image({ maxWidth: 64, maxHeight: 64, nullable: true }),
  leaflet: fields.file({ accept: ['application/pdf'], nullable: true }),
});

export const posters = collection('posters', { serializer: serializer(Poster, { fields: ['id', 'title', 'picture', 'leaflet'], readOnly: ['id'] }) });
