// A stand-in tool-audit for `bench:mcp --sink null`: accepts POST /v1/packets (and the gateway's
// tools/list reports) at once and counts tool_call packets per tool_id, so the gateway's own cost
// is measured without an embedded ClickHouse ingesting on the same two cores.
// GET /count?tool_id=X answers {"tool_calls": n}.
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import { URL } from 'node:url';

const counts = new Map();
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url ?? '/', 'http://sink');
    if (req.method === 'GET' && url.pathname === '/count') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tool_calls: counts.get(url.searchParams.get('tool_id')) ?? 0 }));
      return;
    }
    if (url.pathname === '/v1/packets') {
      for (const line of Buffer.concat(chunks).toString('utf8').split('\n')) {
        const m = /^\{"type":"tool_call".*?"tool_id":"([^"]*)"/.exec(line);
        if (m) counts.set(m[1], (counts.get(m[1]) ?? 0) + 1);
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"results":[]}');
  });
});
server.listen(Number(process.argv[2]), '127.0.0.1');
