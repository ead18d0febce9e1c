/**
 * A record's body, whatever its media type, chosen here and nowhere else: JSON, an HTML form's
 * fields (parsers.ts), or a multipart body whose files are stored as they arrive (multipart.ts),
 * its ordinary fields read as a form's. A view receives the body parsed.
 */
import type { FastifyRequest } from 'fastify';
import type { CappedRules } from '../../../core/file-fields.js';
import { withinCap } from '../../../core/file-fields.js';
import type { FileStorage } from '../../../store/files/storage.js';
import type { Envelope } from '../../declare/collection.js';
import type { Model } from '../../declare/model.js';
import { parseFormOrJson } from '../parsers.js';
import type { MaybePromise } from '../../../core/maybe-promise.js';
import { formReaderOf } from '../../base/admin-calls.js';
import { isMultipart, parseMultipart, type UploadLimits } from './multipart.js';

/** Where a multipart body's files go: the body's model (`rules` has its rules), the storage, and the keys stored so far (the write removes them if it fails). */
export interface Uploads {
  readonly model: Model;
  readonly rules: UploadRules;
  readonly storage: FileStorage;
  readonly limits: UploadLimits;
  readonly stored: string[];
}

/** A model's file fields' rules under the app's cap, and the largest file any of them takes. */
interface ModelUploads {
  readonly rules: ReadonlyMap<string, CappedRules>;
  readonly largestFile: number;
}

/** The upload rules of each model a collection's bodies are read by, under the app's limits: built as the collection mounts. */
export type UploadRules = ReadonlyMap<Model, ModelUploads>;

/** Each model's rules once, however many of the collection's serializers read it. */
export function uploadRulesFor(models: Iterable<Model>, limits: UploadLimits): UploadRules {
  return new Map(
    [...new Set(models)].map((model) => {
      const rules = new Map(Object.entries(model.fields).flatMap(([name, field]) => (field.file ? [[name, withinCap(field.file, limits.maxFileBytes)] as const] : [])));
      return [model, { rules, largestFile: Math.max(0, ...[...rules.values()].map((rule) => rule.maxBytes)) }];
    }),
  );
}

/** Whether a body of `model` may carry files (the model has a file field). */
export const takesFiles = (rules: UploadRules, model: Model): boolean => (rules.get(model)?.rules.size ?? 0) > 0;

/**
 * The body: `fromForm` reads a form's fields (urlencoded, or a multipart body's) by the
 * serializer's field kinds; `uploads`, where the write may store files, takes a multipart body
 * (without it, multipart is 415 as any other type).
 */
export function parseRecordBody(request: FastifyRequest, envelope: Envelope | undefined, fromForm: (form: URLSearchParams) => unknown, uploads?: Uploads): MaybePromise<unknown> {
  if (uploads && isMultipart(request.headers['content-type'])) return uploadBody(request, uploads, fromForm);
  return parseFormOrJson(request, envelope, fromForm);
}

/** A multipart body: its ordinary fields read as a form's (through an in-process caller's reader, where it names one), its files stored. */
async function uploadBody(request: FastifyRequest, uploads: Uploads, fromForm: (form: URLSearchParams) => unknown): Promise<unknown> {
  const own = uploads.rules.get(uploads.model);
  if (!own) throw new Error(`${uploads.model.table}: no upload rules were built for this body's model as its collection mounted.`);
  const { rules, largestFile } = own;
  const reader = formReaderOf(request);
  const read = new URLSearchParams();
  let parsed;
  try {
    parsed = await parseMultipart(request, uploads.limits, { storage: uploads.storage, rulesOf: (name) => rules.get(name), largestFile, prefix: uploads.model.table, stored: uploads.stored }, read);
  } catch (error) {
    // The caller still sees the fields read before the refusal (to show them again).
    reader?.(read);
    throw error;
  }
  const body = fromForm(reader ? reader(parsed.form) : parsed.form);
  return { ...(body as object), ...parsed.files };
}
