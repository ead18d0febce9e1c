#!/usr/bin/env node
/**
 * The ceiling: scenarios (a), (c), (e), (g), (i), (j) and (k) answered as answers.mjs does, served by node:http
 * with nothing else around them: JSON.stringify and one writeHead per response.
 *   DATABASE_URL=... PORT=... [WORKERS=N] node bench/baseline/server.mjs
 */
import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { answer, fail, MAX_BODY_BYTES } from './answers.mjs';

/** The JSON object (or array, a bulk create) a request sent ({ body }), or the error to answer instead ({ status, code, error }). */
async function jsonBody(request) {
  if (!/^application\/json\b/i.test(request.headers['content-type'] ?? '')) {
    return { status: 415, code: 'unsupported_media_type', error: 'Send the body as application/json.' };
  }
  const chunks = [];
  let size = 0;
  for await (const chunk of request) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return { status: 413, code: 'payload_too_large', error: 'The body is too large.' };
    chunks.push(chunk);
  }
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (body !== null && typeof body === 'object') return { body };
  } catch {
    // Answered below, as a body that is no object.
  }
  return { status: 400, code: 'parse_error', error: 'Send a JSON object, or an array of them.' };
}

function send(response, { status, body, headers }) {
  if (body === undefined) {
    response.writeHead(status, headers);
    response.end();
    return;
  }
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  response.end(text);
}

// WORKERS=N: N processes sharing the port (node:cluster), as Restfold's WORKERS runs them.
const workers = Number(process.env.WORKERS ?? 1);
if (cluster.isPrimary && workers > 1) {
  let listening = 0;
  for (let index = 0; index < workers; index++) cluster.fork().once('listening', () => ++listening === workers && console.log('baseline listening'));
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
} else {
  serve();
}

function serve() {
  createServer((request, response) => {
    answer({ method: request.method, url: request.url, headers: request.headers, readBody: () => jsonBody(request) })
      .then((answered) => send(response, answered))
      .catch((error) => {
        // The client hung up while its body was read (a load run stopping): nobody to answer.
        if (error.code === 'ECONNRESET') return;
        console.error(error);
        send(response, fail(500, 'server_error', 'Server error.'));
      });
  }).listen(Number(process.env.PORT ?? 8001), '127.0.0.1', () => cluster.isPrimary && console.log('baseline listening'));

  // Exit normally on a signal, so `node --cpu-prof` writes its profile.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
  // A worker whose primary is gone ends too.
  if (cluster.isWorker) cluster.worker.on('disconnect', () => process.exit(0));
}
