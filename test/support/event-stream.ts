/**
 * A Server-Sent Events client for tests of live streams, over a connection of its own (node:http
 * without an agent: closing it closes the connection, where fetch's pool may open another; inject
 * cannot stream): events are parsed as they arrive, and `next` waits for the next one, failing
 * after a timeout rather than hanging.
 */
import http from 'node:http';

export interface StreamEvent {
  readonly event: string;
  readonly id: string | undefined;
  /** `data` parsed as JSON. */
  readonly data: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary shapes
}

const TIMEOUT_MS = 10_000;

export interface EventStreamClient {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** The next event not yet taken (comments and `retry:` lines are not events). */
  next(timeoutMs?: number): Promise<StreamEvent>;
  /** Resolves once the server has ended the stream (or dropped it), with the events not yet taken. */
  ended(timeoutMs?: number): Promise<StreamEvent[]>;
  /** Every `retry:` value received. */
  readonly retries: number[];
  /** Resolves once `count` comments (heartbeats) have arrived. */
  comments(count: number, timeoutMs?: number): Promise<void>;
  close(): void;
}

/** Opens `url` as EventSource would; `read: false` opens it and never reads (a stalled client). */
export async function openEvents(url: string, headers: Record<string, string> = {}, { read = true } = {}): Promise<EventStreamClient> {
  let request: http.ClientRequest | undefined;
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    request = http.get(url, { headers: { accept: 'text/event-stream', ...headers }, agent: false }, resolve);
    request.on('error', reject);
  });
  const ok = response.statusCode === 200;
  // A stalled client reads nothing: the socket's buffers fill, and the server's queue grows.
  if (!read) response.pause();
  const queued: StreamEvent[] = [];
  const retries: number[] = [];
  let comments = 0;
  let waiting: (() => void) | undefined;
  let done = false;
  const wake = () => {
    const waiter = waiting;
    waiting = undefined;
    waiter?.();
  };
  const parse = (block: string) => {
    let event = 'message';
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      const colon = line.indexOf(':');
      if (colon === 0) {
        comments += 1;
        continue;
      }
      const [field, value] = colon < 0 ? [line, ''] : [line.slice(0, colon), line.slice(colon + 1).replace(/^ /, '')];
      if (field === 'event') event = value;
      else if (field === 'id') id = value;
      else if (field === 'data') data.push(value);
      else if (field === 'retry') retries.push(Number(value));
    }
    if (data.length > 0) queued.push({ event, id, data: JSON.parse(data.join('\n')) });
  };
  const pump = (): void => {
    let buffer = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        parse(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
      wake();
    });
    // Ended by the server, dropped by it, or closed here: either way the stream is over.
    response.on('close', () => {
      done = true;
      wake();
    });
    response.on('error', () => undefined);
    response.resume();
  };
  const until = (ready: () => boolean, timeoutMs: number, what: string): Promise<void> => {
    if (!pumping) {
      pumping = true;
      pump();
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`No ${what} within ${timeoutMs} ms (received: ${JSON.stringify(queued.map(({ event, data }) => [event, data?.id]))})`)), timeoutMs);
      const check = () => {
        if (ready()) {
          clearTimeout(timer);
          resolve();
        } else waiting = check;
      };
      check();
    });
  };
  let pumping = false;
  if (read && ok) {
    pumping = true;
    pump();
  }
  return {
    status: response.statusCode ?? 0,
    headers: response.headers,
    retries,
    async next(timeoutMs = TIMEOUT_MS) {
      await until(() => queued.length > 0 || done, timeoutMs, 'event');
      const event = queued.shift();
      if (!event) throw new Error('The stream ended before another event.');
      return event;
    },
    comments: (count, timeoutMs = TIMEOUT_MS) => until(() => comments >= count, timeoutMs, `${count} comments`),
    async ended(timeoutMs = TIMEOUT_MS) {
      await until(() => done, timeoutMs, 'end of the stream');
      return queued.splice(0);
    },
    close: () => request?.destroy(),
  };
}
