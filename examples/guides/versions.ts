/** The versioning sample of docs/guides/collections-and-actions.md, as an app of its own. */
import { collection, computed, defineApp, fields, model, serializer } from 'restfold';

const Article = model('articles', { id: fields.id(), title: fields.string({ maxLength: 200 }), summary: fields.text({ blank: true, default: '' }) });

// #region versions
const articles = serializer(Article, {
  fields: ['id', 'url', 'title', 'summary'],
  computed: { url: computed.url() },
  // Version 1 has no summary; version 2 (and any version not named here) every field.
  versions: { '1': ['id', 'url', 'title'] },
});

export default defineApp({
  versions: { scheme: 'path', allowed: ['1', '2'] }, // /api/v1/…, /api/v2/…
  collections: [collection('articles', { serializer: articles })],
});
// #endregion versions
