/**
 * The app bench/files.mjs uploads to and downloads from: one collection whose records hold a file
 * of up to 64 MiB (the bench's largest upload is 50 MiB), open to anyone so the bench measures the
 * files' path rather than authentication. Its migration was made by `restfold makemigrations`.
 */
import { allowAny, collection, defineApp, fields, model, serializer } from 'restfold';

const Upload = model('uploads', {
  id: fields.id(),
  body: fields.file({ maxBytes: 64 * 1024 * 1024 }),
});

export default defineApp({
  collections: [collection('uploads', { serializer: serializer(Upload, { fields: ['id', 'body'] }), permissions: [allowAny] })],
});
