/**
 * A minimum rate for request bodies. A client that sends most of a body and
 * then stalls holds that body in memory until the request timeout; with many
 * sockets doing it, that is the process's memory. So every body must keep
 * arriving: over the last `windowMs` (checked every second, or more often for
 * a shorter window), at least `minBytesPerSecond` on average, or the
 * connection is answered 408 and closed.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

export interface BodyRate {
  readonly minBytesPerSecond: number;
  readonly windowMs: number;
}

interface Upload {
  readonly response: ServerResponse;
  /** The socket's byte count at each of the last checks, oldest first. */
  readonly bytesRead: number[];
}

// As Node answers when its own request timeout fires.
const REQUEST_TIMEOUT_RESPONSE = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';

const hasBody = (request: IncomingMessage): boolean =>
  request.headers['transfer-encoding'] !== undefined || (request.headers['content-length'] ?? '0') !== '0';

function cutOff(request: IncomingMessage, response: ServerResponse): void {
  const { socket } = request;
  if (socket.writable && !response.headersSent) socket.write(REQUEST_TIMEOUT_RESPONSE);
  socket.destroy();
}

/** Watches the bodies `server` receives, with one timer while any is arriving. */
export function enforceBodyRate(server: Server, { minBytesPerSecond, windowMs }: BodyRate): void {
  const interval = Math.min(1000, windowMs);
  const intervalsPerWindow = Math.max(1, Math.round(windowMs / interval));
  const minBytesPerWindow = (minBytesPerSecond * intervalsPerWindow * interval) / 1000;
  const uploads = new Map<IncomingMessage, Upload>();
  let timer: NodeJS.Timeout | undefined;
  const check = (): void => {
    for (const [request, { response, bytesRead }] of uploads) {
      if (request.complete || request.destroyed) {
        uploads.delete(request);
        continue;
      }
      bytesRead.push(request.socket.bytesRead);
      if (bytesRead.length <= intervalsPerWindow) continue;
      const windowStart = bytesRead.shift()!;
      if (bytesRead.at(-1)! - windowStart < minBytesPerWindow) {
        uploads.delete(request);
        cutOff(request, response);
      }
    }
    if (uploads.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  // A body that has come is forgotten at once: kept until the next check, every request with a body
  // would outlive the young generation's collections and be copied into the old one.
  function arrived(this: IncomingMessage): void {
    uploads.delete(this);
  }
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (!hasBody(request) || request.complete) return;
    uploads.set(request, { response, bytesRead: [request.socket.bytesRead] });
    request.once('end', arrived);
    timer ??= setInterval(check, interval).unref();
  });
  server.on('close', () => clearInterval(timer));
}
