#!/usr/bin/env node
/**
 * The floor bench/files.mjs measures Restfold's files against: node:http with nothing around it.
 * POST /upload: busboy streams each file part to a file of its own in FILES_FOLDER (a random name,
 * no checks; synced before it closes only with FILES_SYNC=1), answering 201 once every file is written. GET /files/<name>: the file by
 * fs.createReadStream, with its length.
 *   FILES_FOLDER=... PORT=... node bench/baseline/files.mjs
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';

const folder = process.env.FILES_FOLDER;
const flush = process.env.FILES_SYNC === '1';

function upload(request, response) {
  const parser = busboy({ headers: request.headers });
  const written = [];
  const names = [];
  parser.on('file', (_field, file) => {
    const name = randomBytes(12).toString('hex');
    names.push(name);
    written.push(pipeline(file, createWriteStream(join(folder, name), { flush })));
  });
  parser.on('close', () => {
    Promise.all(written).then(
      () => response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ names })),
      (error) => response.writeHead(500).end(String(error)),
    );
  });
  request.pipe(parser);
}

async function download(request, response) {
  const path = join(folder, request.url.slice('/files/'.length).replace(/[^0-9a-zA-Z_-]/g, ''));
  const found = await stat(path).catch(() => null);
  if (!found) return response.writeHead(404).end();
  response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': found.size });
  await pipeline(createReadStream(path), response).catch(() => undefined);
}

const server = createServer((request, response) => {
  if (request.method === 'POST' && request.url === '/upload') return upload(request, response);
  if (request.method === 'GET' && request.url.startsWith('/files/')) return void download(request, response);
  if (request.url === '/readyz') return response.end('ok');
  response.writeHead(404).end();
});
// Longer than a round of the other server's: a kept-alive connection it closed as the bench reused it would fail an upload (EPIPE).
server.keepAliveTimeout = 120_000;
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1');
