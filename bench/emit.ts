/**
 * Latency the emitter adds to a tool call: the same trivial async tool called directly and
 * through emitter.invoke, in interleaved blocks of one run, with a transport that discards.
 * Between blocks the event loop is yielded (untimed) so the background flusher does its
 * work as it would in a real process; that work is reported separately, per call.
 *
 *   npx tsx bench/emit.ts [calls per variant, default 200000]
 */
import { createAuditEmitter, type PacketTransport } from '../emit/index.ts';

const CALLS = Number(process.argv[2] ?? 200_000);
const BLOCK = 1_000;
const WARMUP = 20_000;

const discard: PacketTransport = { send: () => Promise.resolve(), close: () => Promise.resolve() };
const emitter = createAuditEmitter({ transport: discard, orchestrator: 'kernel', agentId: 'bench' });
const args = { query: 'latest quarterly revenue', top_k: 10 };

const tools = {
  'string result': async () => 'three results about quarterly revenue',
  'object result': async () => ({ result_count: 3, urls: ['https://a.example', 'https://b.example'] }),
};

type Fn = () => Promise<unknown>;
const yieldLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Times `n` sequential awaited calls into `out` from `offset`; returns the untimed yield after them (ms). */
async function block(fn: Fn, out: Float64Array, offset: number, n: number): Promise<number> {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out[offset + i] = performance.now() - t0;
  }
  const t0 = performance.now();
  await yieldLoop();
  return performance.now() - t0;
}

function pct(sorted: Float64Array, q: number): number {
  return (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN) * 1000;
}

async function measure(tool: Fn) {
  const direct: Fn = () => tool();
  const wrapped: Fn = () => emitter.invoke('search_web', args, tool, { taskId: 'task-1' });
  const scratch = new Float64Array(BLOCK);
  for (let i = 0; i < WARMUP / BLOCK; i++) {
    await block(direct, scratch, 0, BLOCK);
    await block(wrapped, scratch, 0, BLOCK);
  }
  const d = new Float64Array(CALLS);
  const w = new Float64Array(CALLS);
  let yieldD = 0;
  let yieldW = 0;
  for (let off = 0, round = 0; off < CALLS; off += BLOCK, round++) {
    const n = Math.min(BLOCK, CALLS - off);
    // Alternate which goes first so neither always follows the flusher's work.
    if (round % 2 === 0) {
      yieldD += await block(direct, d, off, n);
      yieldW += await block(wrapped, w, off, n);
    } else {
      yieldW += await block(wrapped, w, off, n);
      yieldD += await block(direct, d, off, n);
    }
  }
  d.sort();
  w.sort();
  return {
    direct: [pct(d, 0.5), pct(d, 0.99)],
    wrapped: [pct(w, 0.5), pct(w, 0.99)],
    backgroundUs: ((yieldW - yieldD) * 1000) / CALLS,
  };
}

const fmt = (n: number) => n.toFixed(2).padStart(8);
console.log(`emitter overhead, ${CALLS} calls per variant, blocks of ${BLOCK}, node ${process.version}`);
console.log('tool            | direct p50 | direct p99 | wrapped p50 | wrapped p99 | added p50 | added p99 | flusher/call');
for (const [name, tool] of Object.entries(tools)) {
  const r = await measure(tool);
  const [dp50 = 0, dp99 = 0] = r.direct;
  const [wp50 = 0, wp99 = 0] = r.wrapped;
  console.log(
    `${name.padEnd(15)} | ${fmt(dp50)} µs| ${fmt(dp99)} µs| ${fmt(wp50)} µs | ${fmt(wp99)} µs | ${fmt(wp50 - dp50)} µs| ${fmt(wp99 - dp99)} µs| ${fmt(r.backgroundUs)} µs`,
  );
}
await emitter.close();
const s = emitter.stats();
console.log(`packets: enqueued ${s.enqueued}, delivered ${s.delivered}, dropped ${s.dropped}, failed batches ${s.failedBatches}`);
console.log('added = wrapped percentile − direct percentile; flusher/call = untimed background work (serialize, hash, batch) per call');
