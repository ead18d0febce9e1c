/**
 * Where a collection is mounted: `/<name>/` and `/<name>/{id}/`, or, for a nested collection, under
 * one record of its parent: `/<parent>/{parent}/<name>/` and `/<parent>/{parent}/<name>/{id}/`.
 * The router and the custom actions build their paths here only, so a router's prefix or
 * trailing-slash mode applies to nested paths as to the others.
 */
import type { FastifySchema } from 'fastify';
import type { JsonSchema } from '../../core/fields.js';
import type { Collection } from './collection.js';
import type { CustomAction } from './custom-action.js';
import { FILE_FIELD_PARAMETER, FILES_SEGMENT } from '../base/file-links.js';

/** The path parameter naming a nested collection's parent record. */
export const PARENT_PARAMETER = 'parent';

/** The list's path: `/<name>/`, or `/<parent>/:parent/<name>/`. */
export const listPath = (collection: Collection): string =>
  collection.parent ? `/${collection.parent.collection.name}/:${PARENT_PARAMETER}/${collection.name}/` : `/${collection.name}/`;

/** One record's path: the list's, then its record key's parameter (`:id/` unless the collection names another). */
export const detailPath = (collection: Collection): string => `${listPath(collection)}:${collection.recordKey.field}/`;

/** Where a record's files are downloaded (routing/downloads.ts): under its path (a singleton's list path), then the field's name. */
export const filesPath = (collection: Collection): string => `${collection.singleton ? listPath(collection) : detailPath(collection)}${FILES_SEGMENT}/:${FILE_FIELD_PARAMETER}/`;

/** A route schema with the parent's path parameter before its own, for a nested collection; unchanged otherwise. */
export function withPathParameters(collection: Collection, schema: FastifySchema): FastifySchema {
  const { parent } = collection;
  if (!parent) return schema;
  const own = (schema.params ?? {}) as JsonSchema;
  const { recordKey } = parent.collection;
  const parentSchema = { ...(recordKey.params.properties as Record<string, JsonSchema>)[recordKey.field], description: `The ${recordKey.field} of the ${parent.collection.name} record this collection is under.` };
  return {
    ...schema,
    params: {
      type: 'object',
      properties: { [PARENT_PARAMETER]: parentSchema, ...(own.properties as Record<string, JsonSchema> | undefined) },
      required: [PARENT_PARAMETER, ...((own.required as string[] | undefined) ?? [])],
    },
  };
}

/** A custom action's path: under the record's or the list's, its `path` or else its name. */
export const customActionPath = (collection: Collection, name: string, action: CustomAction): string =>
  `${action.detail ? detailPath(collection) : listPath(collection)}${action.path ?? name}/`;
