/**
 * Raw packet streams for Kafka tests: valid tool_calls spread over tasks, mixed with invalid
 * packets of every poison kind. Expectations are counted here, from what was generated.
 */
import { randomUUID } from 'node:crypto';
import { outputArtifact, sha, toolCall } from './packets.ts';

/** One generated message and what the pipeline must do with it. */
export interface GenMessage {
  key: string;
  value: string;
  expect: 'invocation' | 'output' | 'quarantine';
  /** For invalid packets: the quarantine reason code the pipeline must give. */
  reason?: string;
}

/** n packets: mostly valid tool_calls, some outputs, and every `invalidEvery`-th one invalid. */
export function mixedStream(n: number, opts: { invalidEvery?: number; outputEvery?: number; tasks?: number } = {}): GenMessage[] {
  const invalidEvery = opts.invalidEvery ?? 50;
  const outputEvery = opts.outputEvery ?? 7;
  const tasks = opts.tasks ?? Math.max(1, Math.floor(n / 20));
  const out: GenMessage[] = [];
  const base = Date.UTC(2026, 10, 1);
  for (let i = 0; i < n; i++) {
    const task = `task-${i % tasks}`;
    if (i % invalidEvery === invalidEvery - 1) {
      const [value, reason] = invalidPacket(i);
      out.push({ key: task, value, expect: 'quarantine', reason });
      continue;
    }
    if (i % outputEvery === outputEvery - 1) {
      const content = `result ${i} — données`;
      out.push({ key: task, value: JSON.stringify(outputArtifact(randomUUID(), content)), expect: 'output' });
      continue;
    }
    const p = toolCall(
      { tool_id: ['search_web', 'fetch_url', 'python_execute', 'create_chart'][i % 4], args: { q: `query ${i}`, page: i % 5 }, created_at: new Date(base + i * 37).toISOString() },
      task,
    );
    out.push({ key: task, value: JSON.stringify(p), expect: 'invocation' });
  }
  return out;
}

function invalidPacket(i: number): [string, string] {
  switch (i % 4) {
    case 0:
      return [`{"type": "tool_call", "call_id": broken ${i}`, 'malformed_json'];
    case 1:
      return [JSON.stringify(toolCall({ status: 'done' })), 'schema'];
    case 2:
      return [JSON.stringify(toolCall({ args_hash: sha(`wrong ${i}`) })), 'I5_args_hash'];
    default:
      return [JSON.stringify({ ...toolCall(), unexpected: i }), 'schema'];
  }
}
