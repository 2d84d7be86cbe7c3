/**
 * Pure parts of the auditor: the shape of a violation, and I10 (every pair of one task's calls
 * within the window has exactly one tool_dependency) computed from a task's calls and pairs.
 */
import { linkCalls, pairKey, type CallPoint } from './pairs.ts';

/** The manifest rules (manifest-rules.ts). */
export type ManifestInvariant = 'M1' | 'M2' | 'M3' | 'M4' | 'M5' | 'M6' | 'M7' | 'M8' | 'M9';

/** A broken SHOULD or cross-segment rule, recorded once in `violations`. */
export interface Violation {
  violation_key: string;
  /** MCP: a finding of the MCP gateway's reports (tool_definition_changed), not of a packet. */
  invariant: 'I4' | 'I8' | 'I9' | 'I10' | 'I11' | ManifestInvariant | 'MCP';
  /** mcp_tools: the finding comes from a tools/list report (POST /v1/mcp/tools). */
  packet_type: 'tool_call' | 'output_artifact' | 'tool_dependency' | 'mcp_tools';
  ids: string[];
  detail: string;
}

/** Builds a violation; its key makes it recorded once however often it is found. */
export function violation(invariant: Violation['invariant'], kind: string, packetType: Violation['packet_type'], ids: string[], detail: string): Violation {
  return { violation_key: `${invariant}/${kind}/${ids.join(',')}`, invariant, packet_type: packetType, ids, detail };
}

/** I10 for one task: pairs within the window with no dependency row, or with more than one. */
export function checkTaskPairs(
  task: string,
  calls: readonly CallPoint[],
  stored: ReadonlyArray<{ preceding_call_id: string; succeeding_call_id: string; n: number }>,
  windowMs: number,
): Violation[] {
  const counts = new Map(stored.map((p) => [pairKey(p.preceding_call_id, p.succeeding_call_id), p.n]));
  const out: Violation[] = [];
  for (const p of linkCalls(calls, windowMs)) {
    const n = counts.get(pairKey(p.preceding.call_id, p.succeeding.call_id)) ?? 0;
    if (n === 1) continue;
    const ids = [p.preceding.call_id, p.succeeding.call_id];
    out.push(
      n === 0
        ? violation('I10', 'missing', 'tool_dependency', ids, `task ${task}: ${p.preceding.tool_id} → ${p.succeeding.tool_id} ${p.time_delta_ms} ms apart has no tool_dependency`)
        : violation('I10', 'duplicated', 'tool_dependency', ids, `task ${task}: ${p.preceding.tool_id} → ${p.succeeding.tool_id} has ${n} tool_dependency rows`),
    );
  }
  return out;
}
