import { describe, expect, it } from 'vitest';
import { workflowDag } from '../../../queries/by-task.ts';

describe('task view', () => {
  it('builds the DAG from the calls and the dependencies between two of them', () => {
    const inv = (id: string) => ({ call_id: id, tool_id: 't', status: 'success' as const, created_at: 'x', duration_ms: 1, cost_usd: null }) as never;
    const dep = (a: string, b: string) => ({ task_id: 'k', preceding_call_id: a, succeeding_call_id: b, preceding_tool_id: 't', succeeding_tool_id: 't', time_delta_ms: 5, data_flow: null, origin: 'emitted' as const });
    const dag = workflowDag([inv('a'), inv('b'), inv('c')], [dep('a', 'b'), dep('b', 'z'), dep('a', 'c')]);
    expect(dag.nodes.map((n) => n.id)).toEqual(['a', 'b', 'c']);
    expect(dag.edges.map((e) => `${e.from}>${e.to}`)).toEqual(['a>b', 'a>c']);
  });
});
