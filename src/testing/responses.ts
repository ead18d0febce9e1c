/**
 * A response as a test reads it, which says where it came from: a failed check on it names the
 * request's method and path, the status and the body, with node:assert and Vitest's expect alike.
 */
import { AssertionError } from 'node:assert';
import { inspect } from 'node:util';

export type Headers = Readonly<Record<string, string | string[] | number | undefined>>;

export interface TestResponse {
  /** The request's method and path (with its query string), as sent. */
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly headers: Headers;
  /** The body parsed as JSON; undefined when it is empty or not JSON. */
  readonly json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- a test reads the shapes it expects
  /** The body as text. */
  readonly text: string;
  /** The body's bytes, as sent (a download's, which text would garble). */
  readonly bytes: Buffer;
}

/** How much of a body a failure message shows. */
const SHOWN = 2000;

/** `POST /api/v1/notes/ → 400` and its body, as a failure message shows it. */
export function describeResponse({ method, path, status, text }: Pick<TestResponse, 'method' | 'path' | 'status' | 'text'>): string {
  const body = text.length > SHOWN ? `${text.slice(0, SHOWN)}… (${text.length - SHOWN} more characters)` : text;
  return `${method} ${path} → ${status}${body ? `\n${body}` : ' (empty body)'}`;
}

function parsed(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function testResponse(method: string, path: string, status: number, headers: Headers, bytes: Buffer): TestResponse {
  const text = bytes.toString('utf8');
  const response = { method, path, status, headers, json: parsed(text), text, bytes };
  // Printed (a failed assert's message, console.log) as the request and its answer, not as fields.
  Object.defineProperties(response, {
    toString: { value: () => describeResponse(response), enumerable: false },
    [inspect.custom]: { value: () => describeResponse(response), enumerable: false },
  });
  return response;
}

/**
 * Asserts the response's status, answering the response; else throws node:assert's AssertionError
 * (which Vitest and node --test both report as a failed assertion) naming the request, the status
 * and the body: `POST /api/v1/notes/ → 400, expected 201` and what the API said.
 */
export function expectStatus<R extends TestResponse>(response: R, expected: number): R {
  if (response.status === expected) return response;
  const [head, ...body] = describeResponse(response).split('\n');
  throw new AssertionError({
    message: `${head}, expected ${expected}${body.length > 0 ? `\n${body.join('\n')}` : ''}`,
    actual: response.status,
    expected,
    operator: 'strictEqual',
    stackStartFn: expectStatus,
  });
}
