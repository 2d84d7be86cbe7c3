// The load generator of `npm run bench:budget`, a process of its own:
//   node bench/emit/budget-load.mjs URL RATE SECONDS KEY  →  one JSON line of latencies (ms)
// Open loop at a constant RATE (like wrk2): every millisecond it sends the checks that are due,
// each on an idle keep-alive socket (a new one when all are busy, so a slow answer never delays
// the next request), and times each from its write to the last byte of its answer. Raw sockets
// and prebuilt requests keep the generator's own CPU and garbage small: on a 2-core machine it
// shares the cores with the server it measures (node:http's client cost ~5× the server's work).
import { Buffer } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { clearInterval, setInterval, setTimeout } from 'node:timers';
import { URL } from 'node:url';

const [url, rate, seconds, key] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4]), process.argv[5]];
const { hostname, port, pathname } = new URL(url);
const AGENTS = Array.from({ length: 10 }, (_, i) => `agent-${i}`);
const TOOLS = Array.from({ length: 10 }, (_, i) => `tool-${i}`);
const idle = [];
const lat = [];
let errors = 0;
let done = 0;

function open() {
  const s = connect({ host: hostname, port: Number(port), noDelay: true });
  Object.assign(s, { buf: '', t0: 0, busy: false });
  s.on('data', (d) => {
    s.buf += d.toString('latin1');
    const end = s.buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const len = Number(/content-length: *(\d+)/i.exec(s.buf.slice(0, end))?.[1] ?? 0);
    if (s.buf.length < end + 4 + len) return;
    if (s.buf.startsWith('HTTP/1.1 200')) lat.push(performance.now() - s.t0);
    else errors++;
    s.buf = s.buf.slice(end + 4 + len);
    s.busy = false;
    done++;
    idle.push(s);
  });
  s.on('error', () => {});
  s.on('close', () => {
    const at = idle.indexOf(s);
    if (at >= 0) idle.splice(at, 1);
    if (!s.busy) return;
    errors++;
    done++;
  });
  return s;
}

function send(i) {
  const s = idle.pop() ?? open();
  const body = JSON.stringify({ agent_id: AGENTS[i % 10], tool_id: TOOLS[(i * 3) % 10], task_id: `task-${i % 500}`, projected_cost_usd: 0.001, ...(i % 2 ? { call_id: randomUUID() } : {}) });
  s.busy = true;
  s.t0 = performance.now();
  s.write(`POST ${pathname} HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\nauthorization: Bearer ${key}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

for (let i = 0; i < 32; i++) idle.push(open());
await new Promise((r) => setTimeout(r, 200));
const total = rate * seconds;
let sent = 0;
const started = performance.now();
await new Promise((resolve) => {
  const tick = setInterval(() => {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
    while (sent < due) send(sent++);
    if (sent < total) return;
    clearInterval(tick);
    resolve();
  }, 1);
});
const deadline = performance.now() + 30_000;
while (done < total && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
const elapsed = (performance.now() - started) / 1000;
lat.sort((a, b) => a - b);
const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? null;
console.log(JSON.stringify({ ok: lat.length, errors: errors + (total - done), seconds: elapsed, p50: q(0.5), p99: q(0.99), p999: q(0.999), max: lat.at(-1) ?? null }));
process.exit(0);
