/** The example service plus `notes`: articles that anyone may list and read, for anonymous-client cases. */
import { allowAny, collection, defineApp, serializer, type AppDefinition } from '../../src/framework/index.js';
import { Article } from '../../src/service/articles.js';
import service from '../../src/service/app.js';

const notes = collection('notes', {
  serializer: serializer(Article, { name: 'Note', fields: ['id', 'title'], readOnly: ['id'] }),
  permissions: { list: [allowAny], retrieve: [allowAny] },
});

export const withPublicNotes = (extra: Partial<AppDefinition> = {}): AppDefinition =>
  defineApp({ ...service, collections: [...service.collections, notes], ...extra });
