/**
 * The features bench's live subscribers, in a process of their own (forked by bench/features.mjs) so
 * that reading the streams neither slows the load generator's event loop nor hides in its CPU: the
 * bench counts this process's CPU apart. argv: the events URL, the authorization header, how many
 * streams. Says `{ opened: true }` once every stream answered 200; answers `count` with the fewest
 * `created` events any stream has received.
 */
import http from 'node:http';

const [url, authorization, count] = process.argv.slice(2);
const received = [];
const streams = await Promise.all(
  Array.from(
    { length: Number(count) },
    (_, index) =>
      new Promise((resolve, reject) => {
        received[index] = 0;
        const request = http.get(url, { headers: { authorization, accept: 'text/event-stream' }, agent: false }, (response) => {
          if (response.statusCode !== 200) return reject(new Error(`a stream answered ${response.statusCode}`));
          response.setEncoding('utf8');
          response.on('data', (chunk) => (received[index] += chunk.split('event: created').length - 1));
          response.on('error', () => {});
          resolve(request);
        });
        request.on('error', reject);
      }),
  ),
);
process.send({ opened: true });
process.on('message', (message) => {
  if (message === 'count') process.send({ fewest: Math.min(...received) });
});
process.on('disconnect', () => {
  for (const stream of streams) stream.destroy();
});
