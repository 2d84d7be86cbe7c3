/**
 * Latency the emitter adds to a tool call: the same trivial async tool called directly, through
 * emitter.invoke, and through an emitter that redacts secrets (`redaction: { key }`), in
 * interleaved blocks of one run, with a transport that discards.
 * Between blocks the event loop is yielded (untimed) so the background flusher does its
 * work as it would in a real process; that work is reported separately, per call.
 *
 *   npx tsx bench/emit/emit.ts [calls per variant, default 200000]
 */
import { createAuditEmitter, type PacketTransport } from '../../emit/index.ts';
import { quantile } from '../stats.ts';

const CALLS = Number(process.argv[2] ?? 200_000);
const BLOCK = 1_000;
const WARMUP = 20_000;

const discard: PacketTransport = { send: () => Promise.resolve(), close: () => Promise.resolve() };
const emitter = createAuditEmitter({ transport: discard, orchestrator: 'kernel', agentId: 'bench' });
const redacting = createAuditEmitter({ transport: discard, orchestrator: 'kernel', agentId: 'bench', redaction: { key: 'bench-redaction-key-0123456789' } });
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

/** The q-quantile of a block's times, in µs. */
function pct(times: Float64Array, q: number): number {
  return quantile(times, q) * 1000;
}

async function measure(tool: Fn) {
  const direct: Fn = () => tool();
  const wrapped: Fn = () => emitter.invoke('search_web', args, tool, { taskId: 'task-1' });
  const redacted: Fn = () => redacting.invoke('search_web', args, tool, { taskId: 'task-1' });
  const variants = [direct, wrapped, redacted];
  const scratch = new Float64Array(BLOCK);
  for (let i = 0; i < WARMUP / BLOCK; i++) for (const f of variants) await block(f, scratch, 0, BLOCK);
  const times = variants.map(() => new Float64Array(CALLS));
  const yields = variants.map(() => 0);
  for (let off = 0, round = 0; off < CALLS; off += BLOCK, round++) {
    const n = Math.min(BLOCK, CALLS - off);
    // Rotate which goes first so none always follows the flusher's work.
    for (let k = 0; k < variants.length; k++) {
      const j = (k + round) % variants.length;
      yields[j] = (yields[j] ?? 0) + (await block(variants[j] as Fn, times[j] as Float64Array, off, n));
    }
  }
  for (const t of times) t.sort();
  const [d, w, r] = times as [Float64Array, Float64Array, Float64Array];
  return {
    direct: [pct(d, 0.5), pct(d, 0.99)],
    wrapped: [pct(w, 0.5), pct(w, 0.99)],
    redacted: [pct(r, 0.5), pct(r, 0.99)],
    backgroundUs: (((yields[1] ?? 0) - (yields[0] ?? 0)) * 1000) / CALLS,
    redactedBackgroundUs: (((yields[2] ?? 0) - (yields[0] ?? 0)) * 1000) / CALLS,
  };
}

const fmt = (n: number) => n.toFixed(2).padStart(8);
console.log(`emitter overhead, ${CALLS} calls per variant, blocks of ${BLOCK}, node ${process.version}`);
console.log('tool            | direct p50 | direct p99 | wrapped p50 | wrapped p99 | added p50 | added p99 | flusher/call | redacting: added p50 | added p99 | flusher/call');
for (const [name, tool] of Object.entries(tools)) {
  const r = await measure(tool);
  const [dp50 = 0, dp99 = 0] = r.direct;
  const [wp50 = 0, wp99 = 0] = r.wrapped;
  const [rp50 = 0, rp99 = 0] = r.redacted;
  console.log(
    `${name.padEnd(15)} | ${fmt(dp50)} µs| ${fmt(dp99)} µs| ${fmt(wp50)} µs | ${fmt(wp99)} µs | ${fmt(wp50 - dp50)} µs| ${fmt(wp99 - dp99)} µs| ${fmt(r.backgroundUs)} µs | ${fmt(rp50 - dp50)} µs | ${fmt(rp99 - dp99)} µs| ${fmt(r.redactedBackgroundUs)} µs`,
  );
}
await emitter.close();
await redacting.close();
const s = emitter.stats();
console.log(`packets: enqueued ${s.enqueued}, delivered ${s.delivered}, dropped ${s.dropped}, failed batches ${s.failedBatches}`);
console.log('added = wrapped percentile − direct percentile; flusher/call = untimed background work (serialize, hash, batch) per call');
