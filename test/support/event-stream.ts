/**
 * A Server-Sent Events client for tests of live streams, over fetch's streaming body (inject
 * cannot stream): events are parsed as they arrive, and `next` waits for the next one, failing
 * after a timeout rather than hanging.
 */
export interface StreamEvent {
  readonly event: string;
  readonly id: string | undefined;
  /** `data` parsed as JSON. */
  readonly data: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary shapes
}

const TIMEOUT_MS = 10_000;

export interface EventStreamClient {
  readonly status: number;
  readonly headers: Headers;
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
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
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
  const pump = async () => {
    if (!response.body) return;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          parse(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
        wake();
      }
    } catch {
      // Dropped by the server, or closed here: either way the stream is over.
    }
    done = true;
    wake();
  };
  const until = (ready: () => boolean, timeoutMs: number, what: string): Promise<void> => {
    if (!read && !pumping) pumping = pump();
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
  let pumping = read && response.ok ? pump() : undefined;
  return {
    status: response.status,
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
    close: () => controller.abort(),
  };
}
