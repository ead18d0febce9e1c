/**
 * An app whose one collection leaves its permissions to the API: with
 * API_REQUIRE_AUTH=false anyone may read it, and a signed-in user may write it.
 */
import { User, collection, defineApp, serializer } from '../../src/framework/index.js';

export const openPeople = defineApp({
  collections: [
    collection('people', { serializer: serializer(User, { fields: ['id', 'username', 'email'], readOnly: ['id'] }) }),
  ],
});
