/**
 * The six built-in actions of a collection (list, retrieve, create, update, partial_update,
 * destroy), each in a file of its own, as the pipeline (views.ts) runs them.
 */
import type { Collection } from '../declare/collection.js';
import type { Action } from '../declare/permission-classes.js';
import { announceRecord, type ActionRequest, type ActionResult, type ActionRoute } from './request.js';
import { list } from './list.js';
import { retrieve } from './retrieve.js';
import { create } from './create.js';
import { change } from './update.js';
import { destroy } from './destroy.js';

const runAction: Record<Action, (action: ActionRequest) => Promise<ActionResult>> = {
  list,
  retrieve,
  create,
  update: (action) => change(action, action.collection.putMode),
  partial_update: (action) => change(action, 'partial_update'),
  destroy,
};

const actionsWithBody: ReadonlySet<Action> = new Set(['create', 'update', 'partial_update']);
/** The actions that read their record first, so it may be announced. */
const readingFirst: ReadonlySet<Action> = new Set(['retrieve', 'update', 'partial_update']);

/** A collection's built-in action as the pipeline runs it. */
export function builtInRoute(collection: Collection, action: Action): ActionRoute {
  // A serializer chosen by the user cannot be known before authentication, when reads are announced.
  const chosenPerRequest = collection.serializersFor(action).length > 1;
  return {
    action,
    mediaTypes: collection.representations,
    takesBody: actionsWithBody.has(action),
    enveloped: true,
    bodySerializer: actionsWithBody.has(action) ? (context, seen) => seen.serializerFor(context) : undefined,
    announce:
      readingFirst.has(action) && !chosenPerRequest
        ? (reader, id, url, scopedTables, seen) => announceRecord(reader, id, url, seen, scopedTables, seen.serializerFor({ action, user: null }))
        : undefined,
    run: runAction[action],
  };
}
