/**
 * A multipart form an in-process caller (the admin) passes on as it came, its bytes streamed
 * through unread: the parsing stage hands the caller the form's fields as they were read (which
 * button was pressed, what to show again if the write is refused) and reads what the caller makes
 * of them (its own fields left out) instead. The caller names its reader by a random id in a
 * header, known only for the call's life, so no other client can ask for one.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

const HEADER = 'x-restfold-form-reader';

/** The fields as read → the fields the serializer reads. */
export type FormReader = (form: URLSearchParams) => URLSearchParams;

const readers = new Map<string, FormReader>();

/** `call` made with the header that names `reader` (a header of its request). */
export async function withFormReader<T>(reader: FormReader, call: (header: Readonly<Record<string, string>>) => Promise<T>): Promise<T> {
  const id = randomBytes(18).toString('base64url');
  readers.set(id, reader);
  try {
    return await call({ [HEADER]: id });
  } finally {
    readers.delete(id);
  }
}

/** The reader the request's header names, if it names one now registered. */
export function formReaderOf(request: FastifyRequest): FormReader | undefined {
  const id = request.headers[HEADER];
  return typeof id === 'string' ? readers.get(id) : undefined;
}
