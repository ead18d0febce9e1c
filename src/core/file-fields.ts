/**
 * The file kinds, `fields.file()` and `fields.image()`: the column holds what names the stored
 * object (its key, random, never the client's file name) and its metadata as JSON, never the
 * bytes. A body sets one only with an upload the parsing stage has already stored (an
 * UploadedFile), or clears a nullable one with null; any other JSON value is refused.
 */
import { FieldError, makeField, type Field, type FileRules, type JsonSchema } from './fields.js';

/** What a file field's column holds (its JSON), and what its rendering shows beside the link. */
export interface StoredFile {
  readonly key: string;
  /** The client's file name, as sent (shown and offered as the download's name, never a path). */
  readonly name: string;
  readonly size: number;
  /** The sniffed type (from the bytes), never the client's claim. */
  readonly content_type: string;
  readonly width?: number;
  readonly height?: number;
}

/** A file already stored by the parsing stage (or by recordStore), as a body hands it to its field. */
export class UploadedFile {
  constructor(readonly stored: StoredFile) {}
}

/** A field's rules as an upload is judged by them: its maxBytes within the app's largest file (FILES_MAX_BYTES), that one where it declares none. */
export type CappedRules = FileRules & { readonly maxBytes: number };
export const withinCap = (rules: FileRules, maxFileBytes: number): CappedRules => ({ ...rules, maxBytes: Math.min(rules.maxBytes ?? maxFileBytes, maxFileBytes) });

export interface FileOptions {
  maxBytes?: number;
  accept?: readonly string[];
  nullable?: boolean;
  required?: boolean;
  keep?: boolean;
}

export interface ImageOptions extends Omit<FileOptions, 'accept'> {
  maxWidth?: number;
  maxHeight?: number;
}

/** The rendered file object (the link is added by the framework, which signs it). */
export const FILE_OBJECT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    url: { type: 'string', format: 'uri', description: 'A signed link to the bytes; it expires.' },
    name: { type: 'string' },
    size: { type: 'integer' },
    content_type: { type: 'string' },
  },
  required: ['url', 'name', 'size', 'content_type'],
};

const IMAGE_OBJECT_SCHEMA: JsonSchema = {
  ...FILE_OBJECT_SCHEMA,
  properties: { ...(FILE_OBJECT_SCHEMA.properties as object), width: { type: 'integer' }, height: { type: 'integer' } },
  required: [...(FILE_OBJECT_SCHEMA.required as string[]), 'width', 'height'],
};

/** Whether a media type is one an `accept` list allows: exactly, or by its `family/*`. */
export function accepts(accept: readonly string[] | undefined, type: string): boolean {
  if (!accept) return true;
  const family = `${type.split('/')[0]}/*`;
  return accept.some((pattern) => pattern === type || pattern === family || pattern === '*/*');
}

function readStored(stored: unknown): StoredFile {
  return (typeof stored === 'string' ? JSON.parse(stored) : stored) as StoredFile;
}

function fileKind(kind: 'file' | 'image', rules: FileRules, schema: JsonSchema, options: FileOptions): Field {
  if (rules.maxBytes !== undefined && (!Number.isSafeInteger(rules.maxBytes) || rules.maxBytes < 1)) throw new Error(`fields.${kind}'s maxBytes must be a positive integer.`);
  const field = makeField(
    {
      kind,
      valueType: 'json',
      lookups: ['isnull'],
      storage: { type: 'json' },
      schema,
      parse(value) {
        if (value instanceof UploadedFile) return value.stored;
        throw new FieldError('Upload a file: send the request as multipart/form-data, with the file in this field.');
      },
      parseText: () => {
        throw new FieldError('A file is filtered by isnull only.');
      },
      render: (stored) => (stored === null || stored === undefined ? null : readStored(stored)),
      toDriver: (value) => JSON.stringify(value),
    },
    { nullable: options.nullable, required: options.required },
  );
  return { ...field, file: rules };
}

function file(options: FileOptions = {}): Field {
  const rules: FileRules = { ...(options.maxBytes !== undefined && { maxBytes: options.maxBytes }), keep: options.keep ?? false, ...(options.accept && { accept: [...options.accept] }) };
  return fileKind('file', rules, FILE_OBJECT_SCHEMA, options);
}

function image(options: ImageOptions = {}): Field {
  const bounds = { ...(options.maxWidth !== undefined && { maxWidth: options.maxWidth }), ...(options.maxHeight !== undefined && { maxHeight: options.maxHeight }) };
  // SVG is no image here: it is a document that may run script, so it is never shown inline.
  const rules: FileRules = { ...(options.maxBytes !== undefined && { maxBytes: options.maxBytes }), keep: options.keep ?? false, accept: ['image/*'], image: bounds };
  return fileKind('image', rules, IMAGE_OBJECT_SCHEMA, options);
}

export const fileFields = { file, image };
