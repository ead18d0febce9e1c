/**
 * One Server-Sent Events response: events written as the protocol frames them, a comment every
 * heartbeat so that proxies keep an idle stream open, and a bound on what waits to be sent. Events
 * are kept until the hub writes them, the events of a few changes together (hub.ts). What Node has
 * not yet handed to the socket (its writable buffer) is the subscriber's queue: when more than
 * `queueBytes` waits there as the next events are written, the subscriber is not reading, and its stream
 * is dropped (the socket destroyed), so a slow client costs at most that much memory and the
 * events of one of the hub's pauses, never the process.
 */
import type { ServerResponse } from 'node:http';

export interface StreamLimits {
  /** Between comments on an idle stream. */
  readonly heartbeatMs: number;
  /** What may wait for a slow subscriber before it is dropped. */
  readonly queueBytes: number;
  /** The reconnection delay a closing stream asks of its client (`retry:`). */
  readonly retryMs: number;
  /**
   * How long a stream lives before it is ended (with `retry:`): its subscriber comes back with
   * Last-Event-ID, authenticated and scoped afresh (the credential and permissions are checked
   * far more often, hub.ts; a scope that reads more than those, within this long).
   */
  readonly maxAgeMs: number;
}

/** A field's value on one line: a line break in it would end the field (JSON has none outside strings, where they are escaped). */
const line = (value: string): string => value.replace(/[\r\n]/g, ' ');

/** An event as the protocol frames it: `event`, `id` (for Last-Event-ID) and its data as JSON. */
export const eventFrame = (event: string, id: string | undefined, data: string): string =>
  `${id === undefined ? '' : `id: ${line(id)}\n`}event: ${event}\ndata: ${line(data)}\n\n`;

export class EventStream {
  private readonly heartbeat: NodeJS.Timeout;
  private readonly expiry: NodeJS.Timeout;
  private closed = false;
  private begun = false;
  /** Events sent and not yet written (see flush). */
  private unwritten: (string | Buffer)[] = [];

  /** `headers`: the response's (Vary, the request id) beside the stream's own. `onClose`: once, however it ends. */
  constructor(
    private readonly response: ServerResponse,
    headers: Record<string, string | string[] | number | undefined>,
    private readonly limits: StreamLimits,
    private readonly onClose: (stream: EventStream) => void,
  ) {
    // Set now, sent with the first write (begin): the answer waits until the hub knows what its subscriber may see.
    response.writeHead(200, {
      ...headers,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      // nginx buffers responses unless told not to.
      'X-Accel-Buffering': 'no',
    });
    // Written at once: a comment, no event, it may go out before events kept.
    this.heartbeat = setInterval(() => this.begun && this.reading() && this.response.write(': heartbeat\n\n'), limits.heartbeatMs).unref();
    this.expiry = setTimeout(() => this.end(), limits.maxAgeMs).unref();
    response.on('close', () => this.finish());
    // A write racing the socket's end must not become an unhandled error.
    response.on('error', () => this.finish());
  }

  /**
   * Sends the answer's head: the hub calls it once it has read the ids its subscriber may see, so
   * that a record the client writes after the answer came is told to it as created.
   */
  begin(): void {
    if (this.begun || this.closed) return;
    this.begun = true;
    this.response.write(`retry: ${this.limits.retryMs}\n\n`);
  }

  /** An event: `event`, `id` (for Last-Event-ID) and its data as JSON. */
  send(event: string, id: string | undefined, data: string): void {
    this.sendFramed(eventFrame(event, id, data));
  }

  /**
   * Events framed by eventFrame (bytes may be shared by streams that are sent the same), kept until
   * flush().
   */
  sendFramed(frames: string | Buffer): void {
    if (!this.closed) this.unwritten.push(frames);
  }

  /**
   * Writes the events kept, in one write, unless the subscriber is not reading (the stream is then
   * dropped with them). Handed to the socket now, not on the next tick as Node's own corking of a
   * chunked response would: the hub measures what its writes cost.
   */
  flush(): void {
    if (this.unwritten.length === 0 || !this.reading()) return;
    const { socket } = this.response;
    socket?.cork();
    for (const frames of this.unwritten) this.response.write(frames);
    socket?.uncork();
    this.unwritten = [];
  }

  /** Ends the stream, after the events kept, with `retry:` telling the client when to come back. */
  end(): void {
    if (this.closed) return;
    this.flush();
    // Dropped by it, its subscriber not reading.
    if (this.closed) return;
    this.response.end(`retry: ${this.limits.retryMs}\n\n`);
    this.finish();
  }

  get open(): boolean {
    return !this.closed;
  }

  /** Whether the subscriber reads: not when more than `queueBytes` still waits from before, and the stream is then dropped. */
  private reading(): boolean {
    if (this.closed) return false;
    if (this.response.writableLength <= this.limits.queueBytes) return true;
    this.response.destroy();
    this.finish();
    return false;
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    // Ended otherwise than by end() (the client left, an error): the connection is closed too, never left half-open.
    if (!this.response.writableEnded) this.response.destroy();
    clearInterval(this.heartbeat);
    clearTimeout(this.expiry);
    this.onClose(this);
  }
}
