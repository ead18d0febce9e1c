/**
 * Slow and oversized clients, against a listening server (these limits live
 * in Node's HTTP server, below what inject reaches).
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/framework/index.js';
import { listeningApis } from '../support/api.js';

const { listening } = listeningApis();

/** Writes `chunks` on a raw connection and resolves with all the server sent once it closes the connection. */
function exchange(port: number, ...chunks: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (data) => (received += data.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    for (const chunk of chunks) socket.write(chunk);
  });
}

const statusLine = (response: string): string => response.split('\r\n')[0]!;
const healthy = async (port: number) => statusLine(await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));

describe('slow clients', () => {
  it('answers 408 and closes a connection whose headers never finish (HEADERS_TIMEOUT_MS), while serving others', async () => {
    const port = await listening({ HEADERS_TIMEOUT_MS: '300', REQUEST_TIMEOUT_MS: '300' });
    const stalled = exchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    expect(await healthy(port)).toBe('HTTP/1.1 200 OK');
    expect(statusLine(await stalled)).toBe('HTTP/1.1 408 Request Timeout');
  });

  it('answers 408 and closes a connection whose body never finishes (REQUEST_TIMEOUT_MS)', async () => {
    const port = await listening({ HEADERS_TIMEOUT_MS: '300', REQUEST_TIMEOUT_MS: '600' });
    const response = await exchange(
      port,
      'POST /api/v1/auth/token/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"username":',
    );
    expect(statusLine(response)).toBe('HTTP/1.1 408 Request Timeout');
  });

  it('closes an idle keep-alive connection after KEEP_ALIVE_TIMEOUT_MS', async () => {
    const port = await listening({ KEEP_ALIVE_TIMEOUT_MS: '200' });
    const response = await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(statusLine(response)).toBe('HTTP/1.1 200 OK');
    // The server kept the connection open after answering; the close came from the idle timeout.
    expect(response).toMatch(/\r\nConnection: keep-alive\r\n/i);
  });

  it('refuses a headers timeout longer than the request timeout', () => {
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '1000' })).toThrow(
      'HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS.',
    );
  });
});

describe('oversized requests', () => {
  it('answers 431 to headers over 128 KiB and keeps serving', async () => {
    const port = await listening();
    const response = await exchange(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(130 * 1024)}\r\n\r\n`);
    expect(statusLine(response)).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(await healthy(port)).toBe('HTTP/1.1 200 OK');
  });

  it('answers 414 uri_too_long, in the envelope, to a request line over 16 KiB on the wire', async () => {
    const port = await listening();
    const response = await exchange(port, `GET /api/v1/users/?search=${'a'.repeat(20 * 1024)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(statusLine(response)).toBe('HTTP/1.1 414 URI Too Long');
    expect(response).toContain('"code":"uri_too_long"');
  });
});
