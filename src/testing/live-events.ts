/**
 * A live stream (Server-Sent Events) read in-process: Fastify's inject hands the response over as
 * a stream once its head is written, and its events are parsed as they arrive, for a test to wait
 * for the next one or a number of them, failing after a timeout rather than hanging.
 */
import type { Readable } from 'node:stream';
import { AssertionError } from 'node:assert';
import type { Headers } from './responses.js';

export interface LiveEvent {
  /** The event's name (`created`, `updated`, `deleted`, ...). */
  readonly event: string;
  readonly id: string | undefined;
  /** Its data, parsed as JSON. */
  readonly data: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- a test reads the shapes it expects
}

export interface LiveEvents {
  readonly path: string;
  readonly status: number;
  readonly headers: Headers;
  /** A refused stream's body (401, 403, 404, ...) as text; empty while the stream is open. */
  readonly text: string;
  /** Every event received so far, in order. */
  readonly received: readonly LiveEvent[];
  /** The next event next() has not answered yet, waiting up to `timeoutMs` (default 5 s). */
  next(timeoutMs?: number): Promise<LiveEvent>;
  /** Waits until `count` events have been received in all (up to `timeoutMs`), answering them. */
  collect(count: number, timeoutMs?: number): Promise<LiveEvent[]>;
  /** Ends the stream, as a client going away does. */
  close(): void;
}

const TIMEOUT_MS = 5000;

/** An event block's fields; undefined for a block with no data (a comment, a `retry:`). */
function parseBlock(block: string): LiveEvent | undefined {
  let event = 'message';
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    const colon = line.indexOf(':');
    if (colon === 0) continue;
    const [field, value] = colon < 0 ? [line, ''] : [line.slice(0, colon), line.slice(colon + 1).replace(/^ /, '')];
    if (field === 'event') event = value;
    else if (field === 'id') id = value;
    else if (field === 'data') data.push(value);
  }
  return data.length > 0 ? { event, id, data: JSON.parse(data.join('\n')) } : undefined;
}

/** The events of `body`, a stream the response `status` began; `end` destroys the server's side. */
export async function readLiveEvents(path: string, status: number, headers: Headers, body: Readable, end: () => void): Promise<LiveEvents> {
  const received: LiveEvent[] = [];
  let taken = 0;
  let done = false;
  let wake: (() => void) | undefined;
  let text = '';
  const woken = () => {
    const waiter = wake;
    wake = undefined;
    waiter?.();
  };
  body.setEncoding('utf8');
  body.on('end', () => {
    done = true;
    woken();
  });
  body.on('error', () => {
    done = true;
    woken();
  });
  if (status !== 200) {
    for await (const chunk of body) text += chunk as string;
  } else {
    let buffer = '';
    body.on('data', (chunk: string) => {
      buffer += chunk;
      let at: number;
      while ((at = buffer.indexOf('\n\n')) >= 0) {
        const event = parseBlock(buffer.slice(0, at));
        buffer = buffer.slice(at + 2);
        if (event) received.push(event);
      }
      woken();
    });
  }

  /** Resolves once `ready()` holds, or throws after `timeoutMs` saying what was awaited and what arrived. */
  const until = async (ready: () => boolean, awaited: string, timeoutMs: number): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (!ready()) {
      const left = deadline - Date.now();
      if (done || left <= 0) {
        const seen = received.map(({ event, data }) => `${event} ${JSON.stringify(data)}`).join('\n') || '(none)';
        throw new AssertionError({ message: `GET ${path} (live): ${awaited}, but the stream ${done ? 'ended' : `was quiet for ${timeoutMs} ms`}. Events received:\n${seen}` });
      }
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
    }
  };

  return {
    path,
    status,
    headers,
    get text() {
      return text;
    },
    received,
    async next(timeoutMs = TIMEOUT_MS) {
      await until(() => received.length > taken, `waited for event ${taken + 1}`, timeoutMs);
      return received[taken++]!;
    },
    async collect(count, timeoutMs = TIMEOUT_MS) {
      await until(() => received.length >= count, `waited for ${count} events`, timeoutMs);
      return received.slice(0, count);
    },
    close() {
      done = true;
      end();
      body.destroy();
      woken();
    },
  };
}
