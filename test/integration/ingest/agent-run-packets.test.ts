/**
 * agent_run packets, as a producer sends them: over HTTP (POST /v1/packets) and over Kafka they
 * land in agent_runs once, with their text as sent; a redelivery is a duplicate, another run under
 * the same id an I1 conflict, a success with an error I3, an unknown field a schema rejection;
 * the task view and the task list name the task after its outermost run. Oracles: the values
 * sent and the order worked out by hand.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { count, rows } from '../../helpers/clickhouse.ts';
import { testKafka } from '../../helpers/kafka.ts';
import { goodTwiceAndBad, packetApp } from '../../helpers/packet-trips.ts';
import { toolCall } from '../../helpers/packets.ts';

const END = Date.now() - 3_600_000;

function runPacket(over: Record<string, unknown> = {}) {
  return {
    type: 'agent_run',
    run: {
      run_id: randomUUID(),
      task_id: 'task-runs',
      agent_id: 'planner',
      name: 'Refund request — order "7"\t#1',
      duration_ms: 4000,
      status: 'success',
      error: null,
      trace_id: '5b8efff798038103d269b633813fc60c',
      span_id: 'eee19b7ec3c1b174',
      parent_span_id: null,
      created_at: new Date(END).toISOString(),
      ...over,
    },
  };
}


describe('agent_run packets', () => {
  it('over HTTP: stored once, redelivery a duplicate, bad ones quarantined with their reason; the task named after its outermost run', async () => {
    const { ch, db, app, c } = await packetApp('runp');
    const outer = runPacket();
    // A sub-agent: starts 1 s after the outer run, under its span.
    const inner = runPacket({ agent_id: 'researcher', name: 'look up the order', duration_ms: 2000, created_at: new Date(END - 1000).toISOString(), span_id: '00f067aa0ba902b7', parent_span_id: 'eee19b7ec3c1b174' });
    const call = toolCall({ created_at: new Date(END - 1500).toISOString() }, 'task-runs');
    const first = (await c.postPackets(JSON.stringify([inner, call, outer]))).json();
    expect(first).toMatchObject({ accepted: 3, rejected: 0, duplicates: 0 });
    expect(first.results[0]).toMatchObject({ packet_type: 'agent_run', ids: [inner.run.run_id] });

    const bad = [outer, runPacket({ run_id: outer.run.run_id, name: 'renamed' }), runPacket({ status: 'success', error: 'but it worked' }), runPacket({ duration_ms: -1 }), runPacket({ tokens: 5 })];
    const second = (await c.postPackets(JSON.stringify(bad))).json();
    expect(second.results.map((r: { status: string; reason?: { code: string } }) => r.reason?.code ?? r.status)).toEqual(['duplicate', 'I1_run_id_reused', 'I3_error_on_success', 'schema', 'schema']);
    expect(await count(ch, db, 'agent_runs')).toBe(2);
    const q = await rows<{ packet_type: string }>(ch, 'SELECT packet_type FROM {db:Identifier}.quarantine', { db });
    expect(q.map((r) => r.packet_type)).toEqual(['agent_run', 'agent_run', 'agent_run', 'agent_run']);

    const view = await c.get('/v1/tasks/task-runs');
    expect(view.statusCode, view.body).toBe(200);
    const v = view.json();
    expect([v.name, v.agent_id]).toEqual([outer.run.name, 'planner']);
    expect(v.agent_runs).toEqual([
      { run_id: outer.run.run_id, agent_id: 'planner', name: outer.run.name, started_at: new Date(END - 4000).toISOString(), duration_ms: 4000, status: 'success', error: null, trace_id: outer.run.trace_id, span_id: 'eee19b7ec3c1b174', parent_span_id: null, created_at: new Date(END).toISOString() },
      { run_id: inner.run.run_id, agent_id: 'researcher', name: 'look up the order', started_at: new Date(END - 3000).toISOString(), duration_ms: 2000, status: 'success', error: null, trace_id: outer.run.trace_id, span_id: '00f067aa0ba902b7', parent_span_id: 'eee19b7ec3c1b174', created_at: new Date(END - 1000).toISOString() },
    ]);
    const list = (await c.get(`/v1/tasks?from=${new Date(END - 60_000).toISOString()}`)).json();
    expect(list.tasks.map((t: { task_id: string; name: string | null }) => [t.task_id, t.name])).toEqual([['task-runs', outer.run.name]]);
    await app.close();
  });

  describe('over Kafka', () => {
    const kafka = testKafka();

    it('stores a run from the topic once and quarantines a bad one', async () => {
      const good = runPacket();
      const { ch, db, names } = await goodTwiceAndBad(kafka, { name: 'runs', key: good.run.task_id, good, bad: runPacket({ status: 'success', error: 'x' }), table: 'agent_runs' });
      const [row] = await rows<{ run_id: string; name: string; source: string }>(ch, 'SELECT toString(run_id) AS run_id, name, source FROM {db:Identifier}.agent_runs', { db });
      expect(row?.run_id).toBe(good.run.run_id);
      expect(row?.name).toBe(good.run.name);
      expect(row?.source).toMatch(new RegExp(`^kafka:${names.topic}/`));
      expect(await rows(ch, 'SELECT reason_code FROM {db:Identifier}.quarantine', { db })).toEqual([{ reason_code: 'I3_error_on_success' }]);
    });
  });
});
