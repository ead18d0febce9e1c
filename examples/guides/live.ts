/** The sample of docs/guides/live-changes.md, as an app. */
import { collection, defineApp, fields, model, serializer, type Scope } from 'restfold';

const Article = model('articles', { id: fields.id(), title: fields.string({ maxLength: 200 }), status: fields.choice(['draft', 'published']), owner_id: fields.foreignKey('users') });
const articleSerializer = serializer(Article, { fields: ['id', 'title', 'status'], readOnly: ['id'] });
const scope: Scope = ({ user }) => ({ owner_id: user?.id ?? null });

export default defineApp({
  collections: [
    // #region live
    collection('articles', { serializer: articleSerializer, scope, filterFields: ['status'], live: true }),
    // or live: { track: 5000 }; live: { path: 'stream' } for GET /api/v1/articles/stream/
    // #endregion live
  ],
});
