/** Record ids in paths: a collection's detail id, and a simple route's id. */
import { FieldError, parseInteger64 } from '../../core/fields.js';
import type { RecordId } from '../../store/read/records.js';
import { ApiError, MalformedPathId } from '../base/errors.js';

/** A detail path's id: a positive 64-bit integer (digits only, no leading zero), else undefined. */
export function idOf(text: string): RecordId | undefined {
  try {
    if (/^[1-9]\d*$/.test(text)) return parseInteger64(text);
  } catch (error) {
    if (!(error instanceof FieldError)) throw error;
  }
  return undefined;
}

/** What a detail path whose id is no positive 64-bit integer answers: 400, keyed by the path's parameter. */
export const invalidId = (parameter = 'id'): ApiError => new MalformedPathId({ [parameter]: ['A valid positive 64-bit integer is required.'] });

/** A path's id segment: a signed 64-bit integer, else 400 (whether a record has it is for the store to say). */
export function parseRecordId(text: string, name = 'record'): RecordId {
  try {
    return parseInteger64(text);
  } catch (error) {
    if (!(error instanceof FieldError)) throw error;
    throw new ApiError(400, 'validation_failed', `Invalid ${name} id: it must be a 64-bit integer.`);
  }
}
