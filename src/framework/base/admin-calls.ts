/**
 * The requests the admin makes in-process to the API (admin/api.ts), told apart from a client's by
 * a random id in a header, known only for the call's life, so no client can pass for the admin.
 * The write unit logs them where HISTORY=admin (the default) logs the admin's writes alone, as
 * Django's LogEntry does. A form with files the admin passes on as it came, its bytes streamed
 * through unread: the parsing stage hands the admin's form reader the fields as they were read
 * (which button was pressed, what to show again if the write is refused) and reads what the
 * reader makes of them (the admin's own fields left out) instead.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

const HEADER = 'x-restfold-admin-call';

/** The fields as read → the fields the serializer reads. */
export type FormReader = (form: URLSearchParams) => URLSearchParams;

interface AdminCall {
  readonly formReader?: FormReader | undefined;
}

const calls = new Map<string, AdminCall>();

/** `call` made with the header that names it the admin's (and names its form reader). */
export async function asAdminCall<T>(adminCall: AdminCall, call: (header: Readonly<Record<string, string>>) => Promise<T>): Promise<T> {
  const id = randomBytes(18).toString('base64url');
  calls.set(id, adminCall);
  try {
    return await call({ [HEADER]: id });
  } finally {
    calls.delete(id);
  }
}

const adminCallOf = (request: FastifyRequest): AdminCall | undefined => {
  const id = request.headers[HEADER];
  return typeof id === 'string' ? calls.get(id) : undefined;
};

/** Whether the request is one of the admin's calls now under way. */
export const isAdminCall = (request: FastifyRequest): boolean => adminCallOf(request) !== undefined;

/** The form reader the admin's call names, if the request is one that names one. */
export const formReaderOf = (request: FastifyRequest): FormReader | undefined => adminCallOf(request)?.formReader;
