/**
 * What a crowd of slow clients can hold, over real sockets: no more than
 * MAX_CONNECTIONS open connections, and no body that stops arriving at
 * BODY_MIN_BYTES_PER_SECOND (measured over each BODY_TIMEOUT_MS stretch).
 */
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { listeningApis } from '../support/api.js';

const apis = listeningApis();
const listening = apis.listening;
const sockets: Socket[] = [];
// Registered after listeningApis' hook, so it runs first: the sockets go before the service closes.
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
});

/** A connection that resolves, once the server closes it, with all it received and when (ms after opening). */
function open(port: number): { socket: Socket; closed: Promise<{ received: string; afterMs: number }> } {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  const opened = performance.now();
  let received = '';
  socket.on('data', (data) => (received += data.toString('latin1')));
  const closed = new Promise<{ received: string; afterMs: number }>((resolve) => {
    socket.on('close', () => resolve({ received, afterMs: performance.now() - opened }));
    socket.on('error', () => undefined);
  });
  return { socket, closed };
}

const statusLine = (response: string): string => response.split('\r\n')[0]!;
const tokenRequestHead = (length: number) =>
  `POST /api/v1/auth/token/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`;

describe('MAX_CONNECTIONS', () => {
  it('closes connections past the cap unanswered, and serves again once one is free', async () => {
    const port = await listening({ MAX_CONNECTIONS: '3' });
    const held = [open(port), open(port), open(port)];
    // Each holds its connection with headers that have not finished.
    for (const { socket } of held) socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    while ((await new Promise<number>((resolve) => apis.served().app.server.getConnections((_, count) => resolve(count)))) < 3) await sleep(10);

    const refused = open(port);
    refused.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect((await refused.closed).received).toBe('');

    held[0]!.socket.destroy();
    await held[0]!.closed;
    const served = open(port);
    served.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(statusLine((await served.closed).received)).toBe('HTTP/1.1 200 OK');
  });
});

describe('the minimum body rate', () => {
  const env = { BODY_TIMEOUT_MS: '300', BODY_MIN_BYTES_PER_SECOND: '1000' };

  it('answers 408 and closes a connection whose body stalls, long before the request timeout', async () => {
    const port = await listening(env);
    const stalled = open(port);
    stalled.socket.write(`${tokenRequestHead(100_000)}{"username":"${'a'.repeat(50_000)}`);
    const { received, afterMs } = await stalled.closed;
    expect(statusLine(received)).toBe('HTTP/1.1 408 Request Timeout');
    // REQUEST_TIMEOUT_MS is 30 s: the cut came from the body rule.
    expect(afterMs).toBeLessThan(10_000);
  });

  it('cuts off a body that trickles in below the rate', async () => {
    const port = await listening(env);
    const trickle = open(port);
    trickle.socket.write(tokenRequestHead(10_000));
    const dripping = setInterval(() => trickle.socket.write('          '), 50);
    try {
      expect(statusLine((await trickle.closed).received)).toBe('HTTP/1.1 408 Request Timeout');
    } finally {
      clearInterval(dripping);
    }
  });

  it('lets a body that keeps the rate take several stretches to arrive', async () => {
    const port = await listening(env);
    const json = JSON.stringify({ username: 'nobody', password: 'wrong' });
    const steady = open(port);
    const padding = 12 * 1024;
    steady.socket.write(tokenRequestHead(json.length + padding) + json);
    // 1 KiB every 100 ms (10 KiB/s) for 1.2 s: four 300 ms stretches.
    for (let sent = 0; sent < padding; sent += 1024) {
      await sleep(100);
      steady.socket.write(' '.repeat(1024));
    }
    const { received } = await steady.closed;
    expect(statusLine(received)).toBe('HTTP/1.1 400 Bad Request');
    expect(received).toMatch(/validation_failed|Unable to log in/);
  });
});
