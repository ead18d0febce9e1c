/** retrieve: the record the path names, as the request may see it. */
import { strongEtag } from '../stages/conditional.js';
import { chosenFields } from '../declare/serializer.js';
import { loadRecord, written, type ActionRequest, type ActionResult } from './request.js';

export async function retrieve(action: ActionRequest): Promise<ActionResult> {
  const serializer = chosenFields(action.collection.serializerFor(action), action.parameters);
  const { row } = await loadRecord(action, serializer);
  const body = serializer.render(row, action);
  return written(200, body, strongEtag);
}
