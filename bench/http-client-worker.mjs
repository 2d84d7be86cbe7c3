// The HTTP client of `npm run bench:queries`, on a thread of its own: a dashboard or a script
// calling the API runs in another process, so its reading of a large answer must not take turns
// with the server on the server's event loop. GETs over one keep-alive connection; each answer's
// time is measured here, from the request to the last byte of the body.
import { Buffer } from 'node:buffer';
import { Agent, get } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const { base, key } = workerData;

parentPort.on('message', ({ id, url }) => {
  const start = performance.now();
  get(base + url, { agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
    const chunks = [];
    res.on('data', (c) => chunks.push(c));
    res.on('error', (err) => parentPort.postMessage({ id, error: String(err) }));
    res.on('end', () => {
      const ms = performance.now() - start;
      const body = Buffer.concat(chunks).toString('utf8');
      if (res.statusCode !== 200) parentPort.postMessage({ id, error: `GET ${url} → ${res.statusCode} ${body.slice(0, 200)}` });
      else parentPort.postMessage({ id, ms });
    });
  }).on('error', (err) => parentPort.postMessage({ id, error: String(err) }));
});
