/**
 * Shared by the emitter tests: an emitter on an in-memory sink, and `sent()`, which checks
 * every packet it sent with the ingest validator (exactly as a tool-audit server judges
 * them) before handing the packets back. Expected hashes come from node:crypto here, over
 * text the tests write themselves, never from the code under test.
 */
import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { createAuditEmitter, createMemoryTransport, type MemoryTransport } from '../../../emit/index.ts';
import { decodePacket } from '../../../ingest/decode-packet.ts';

export const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

export interface Invocation {
  call_id: string;
  task_id: string | null;
  tool_id: string;
  agent_id: string;
  orchestrator: string;
  instance_id: string;
  args: Record<string, unknown>;
  args_hash: string;
  status: string;
  duration_ms: number;
  result_summary: Record<string, unknown>;
  error: string | null;
  cost_usd: number | null;
  tokens_used: Record<string, number> | null;
  created_at: string;
}
export interface Output {
  output_id: string;
  call_id: string;
  content_type: string;
  content_hash: string;
  size_bytes: number;
  sample: string | null;
  created_at: string;
}
export type Sent = { type: 'tool_call'; call_id: string; invocation: Invocation } | { type: 'output_artifact'; output: Output; content: unknown };

export function setup(extra: { instanceId?: string } = {}) {
  const transport = createMemoryTransport();
  const emitter = createAuditEmitter({ transport, orchestrator: 'kernel', agentId: 'L', buffer: { lingerMs: 1 }, ...extra });
  return { transport, emitter };
}

/** Flushes, then checks every message with the ingest validator and returns the packets. */
export async function sent(emitter: ReturnType<typeof setup>['emitter'], transport: MemoryTransport) {
  expect(await emitter.flush(2000)).toBe(true);
  const messages = transport.messages();
  for (const m of messages) {
    const r = decodePacket({ raw: m.value, source: { kind: 'http', requestId: 'test', index: 0 } }, 1 << 22);
    expect(r.ok, `${m.value.slice(0, 300)} → ${JSON.stringify(r.ok ? null : r.error)}`).toBe(true);
  }
  const packets = messages.map((m) => JSON.parse(m.value) as Sent);
  const calls = packets.flatMap((p) => (p.type === 'tool_call' ? [p.invocation] : []));
  const outputs = packets.flatMap((p) => (p.type === 'output_artifact' ? [{ ...p.output, content: p.content }] : []));
  return { messages, packets, calls, outputs };
}

