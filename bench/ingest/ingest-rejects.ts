/**
 * The second topic of the ingest benchmark's reject phase (`--reject-share S`): as many packets as
 * the first topic, a share S of them rejected, the rest fresh accepted packets (the workload of
 * bench/ingest/ingest-workload.ts under another seed, so new ids). The rejected ones are what real
 * producers send:
 *
 * - 80 % I1 reuses: valid tool_calls and outputs OF THE FIRST TOPIC (same call_id / output_id)
 *   with created_at moved by 1 ms, as a producer regenerating a field on retry sends them. They
 *   are found by re-running the first topic's generator (same seed), so no ids are kept in memory;
 * - 10 % schema violations (a tool_call missing tool_id, or with duration_ms as a string);
 * - 10 % I5: a tool_call whose args_hash does not match its args.
 *
 * Schema and I5 packets get call_ids of their own, so only the rule they break rejects them.
 * Deterministic: the same first topic gives the same second topic.
 */
import { sha256Hex, utf8ByteLength } from '../../schemas/hashing.ts';
import { emptyCounts, rng, workload, type WorkloadCounts, type WorkloadMessage, type WorkloadOptions } from './ingest-workload.ts';

/** What the reject topic holds, counted while generating. */
export interface RejectCounts {
  messages: number;
  bytes: number;
  share: number;
  /** Rejected packets added to the fresh workload, by kind. */
  rejected: { i1Calls: number; i1Outputs: number; schema: number; i5: number };
  /** The fresh part: a workload of its own (with its own few invalid and reused packets). */
  fresh: WorkloadCounts;
  /** Rows this topic must ADD to the segments of a database that already holds the first topic. */
  expect: { invocations: number; outputs: number; quarantine: number };
}

/** Total of {@link RejectCounts.rejected}. */
export const rejectedTotal = (c: RejectCounts): number => c.rejected.i1Calls + c.rejected.i1Outputs + c.rejected.schema + c.rejected.i5;

/** Fresh counters for {@link rejectWorkload}. */
export function emptyRejectCounts(share: number): RejectCounts {
  return { messages: 0, bytes: 0, share, rejected: { i1Calls: 0, i1Outputs: 0, schema: 0, i5: 0 }, fresh: emptyCounts(), expect: { invocations: 0, outputs: 0, quarantine: 0 } };
}

/** Moves the first created_at of a packet by 1 ms: the invocation's, or the output's (it precedes the content). */
function bumpCreatedAt(value: string): string {
  const at = value.indexOf('"created_at":"') + '"created_at":"'.length;
  const end = value.indexOf('"', at);
  const moved = new Date(Date.parse(value.slice(at, end)) + 1).toISOString();
  return value.slice(0, at) + moved + value.slice(end);
}

/** A tool_call of the first topic turned into a packet that breaks a per-packet rule, under a new call_id. */
function brokenCall(value: string, callId: string, n: number, kind: 'schema' | 'i5'): string {
  const p = JSON.parse(value) as { call_id: string; invocation: Record<string, unknown> };
  p.call_id = callId;
  p.invocation.call_id = callId;
  if (kind === 'i5') p.invocation.args_hash = sha256Hex(`not the args ${n}`);
  else if (n % 2 === 0) delete p.invocation.tool_id;
  else p.invocation.duration_ms = String(p.invocation.duration_ms);
  return JSON.stringify(p);
}

/**
 * The reject topic, in production order: rejected packets spread evenly among the fresh ones.
 * `first` must be the options the first topic was generated with and `firstCounts` its counts.
 */
export function* rejectWorkload(first: WorkloadOptions, firstCounts: WorkloadCounts, share: number, counts: RejectCounts): Generator<WorkloadMessage> {
  const total = firstCounts.messages;
  const nReject = Math.round(share * total);
  const nI1 = Math.round(nReject * 0.8);
  const nSchema = Math.round(nReject * 0.1);
  const nBad = nReject - nI1;
  const freshTarget = total - nReject;
  // Tool_calls giving about freshTarget packets at the first topic's packets per call.
  const freshCalls = Math.round((freshTarget * firstCounts.toolCalls) / firstCounts.messages);
  const fresh = freshCalls > 0 ? workload({ ...first, toolCalls: freshCalls, seed: (first.seed ?? 7) + 1 }, counts.fresh) : undefined;
  const r = rng((first.seed ?? 7) * 7919 + 1);
  const newId = () => {
    let s = '';
    for (let i = 0; i < 32; i++) s += (i === 8 || i === 12 || i === 16 || i === 20 ? '-' : '') + (i === 12 ? '4' : '0123456789abcdef'[Math.floor(r() * 16)]);
    return s;
  };
  // Selection sampling (Knuth's algorithm S): exactly nI1 of the valid packets, nBad of the valid tool_calls.
  let validLeft = firstCounts.expect.invocations + firstCounts.expect.outputs;
  let callsLeft = firstCounts.expect.invocations;
  let i1Left = nI1;
  let badLeft = nBad;
  let freshSent = 0;
  let rejectSent = 0;
  const emit = (m: WorkloadMessage) => {
    counts.messages++;
    counts.bytes += utf8ByteLength(m.value);
    return m;
  };
  // Fresh packets go out ahead of the rejected ones in proportion, so the mix is even over the topic.
  function* freshUpTo(share: number): Generator<WorkloadMessage> {
    while (fresh && freshSent < share * freshTarget) {
      const next = fresh.next();
      if (next.done) return;
      freshSent++;
      yield emit(next.value);
    }
  }
  const source = nReject > 0 ? workload(first) : ([] as WorkloadMessage[]);
  for (const m of source) {
    if (m.role !== 'valid') continue;
    const isCall = m.value.startsWith('{"type":"tool_call"');
    const out: WorkloadMessage[] = [];
    if (i1Left > 0 && r() * validLeft < i1Left) {
      i1Left--;
      if (isCall) counts.rejected.i1Calls++;
      else counts.rejected.i1Outputs++;
      out.push({ key: m.key, value: bumpCreatedAt(m.value), role: 'reused' });
    }
    if (isCall && badLeft > 0 && r() * callsLeft < badLeft) {
      badLeft--;
      const schema = counts.rejected.schema < nSchema && (counts.rejected.i5 >= nBad - nSchema || r() < 0.5);
      if (schema) counts.rejected.schema++;
      else counts.rejected.i5++;
      out.push({ key: m.key, value: brokenCall(m.value, newId(), counts.rejected.schema + counts.rejected.i5, schema ? 'schema' : 'i5'), role: 'invalid' });
    }
    validLeft--;
    if (isCall) callsLeft--;
    for (const o of out) {
      yield* freshUpTo(rejectSent / nReject);
      rejectSent++;
      yield emit(o);
    }
    if (i1Left === 0 && badLeft === 0) break;
  }
  yield* freshUpTo(Infinity);
  counts.expect = {
    invocations: counts.fresh.expect.invocations,
    outputs: counts.fresh.expect.outputs,
    quarantine: counts.fresh.expect.quarantine + rejectedTotal(counts),
  };
}
