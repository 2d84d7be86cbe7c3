/**
 * The segment writer's own contract on real ClickHouse: rows read back exactly as decoded
 * (TabSeparated serialization of awkward strings), and batches that share a commit round are
 * judged as if committed one after another (duplicates, I1 conflicts, quarantine once).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodePacket } from '../../../ingest/decode-packet.ts';
import type { RawPacket } from '../../../ingest/rows.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { count, freshDatabase, rows, doorOf } from '../../helpers/clickhouse.ts';
import { dependency, outputArtifact, toolCall } from '../../helpers/packets.ts';

const kafka = (value: unknown, offset: number): RawPacket => ({
  raw: typeof value === 'string' ? value : JSON.stringify(value),
  source: { kind: 'kafka', topic: 'writer-test', partition: 0, offset: String(offset) },
});

const AWKWARD = ['tab\there', 'new\nline', 'cr\rlf\r\n', 'back\\slash \\N \\t', 'nul\u0000byte', '\\N', '', 'Zürich — 😀 \u2028', "quote ' and \""];

describe('segment writer on real ClickHouse', () => {
  it.each([0, 1])('stores every field exactly as decoded, awkward strings included (decode threads: %i)', async (decodeThreads) => {
    const { ch, db } = await freshDatabase('writer');
    const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics: new MetricsRegistry(), logger: silentLogger(), decodeThreads });
    const task = `task\t${randomUUID()}\n\\N`;
    const calls = AWKWARD.map((s, i) =>
      toolCall(
        {
          tool_id: `tool ${s || 'empty'}`.slice(0, 200),
          agent_id: `agent\\${i}`,
          instance_id: `inst\n${i}`,
          args: { q: s, n: i, nested: { s } },
          status: i % 2 ? 'error' : 'success',
          error: i % 2 ? s || 'e' : null,
          result_summary: { s, i },
          tokens_used: i % 3 ? { input_tokens: i } : null,
          cost_usd: i % 4 ? i / 3 : null,
          created_at: new Date(Date.UTC(2026, 10, 20, 1, 2, 3, i)).toISOString(),
          ...(i % 2 && s ? { approval: { approved_by: `by ${s}`.slice(0, 200), approved_at: '2026-11-20T02:02:03+01:00', reference: s } } : {}),
        },
        task,
      ),
    );
    const outputs = AWKWARD.filter(Boolean).map((s) => outputArtifact(calls[0]?.call_id as string, `${s} content`, 'text'));
    const deps = AWKWARD.map((s) => dependency({ task_id: task, data_flow: s || null }));
    // Enough packets to go to a decode thread (small batches stay on the main thread).
    const filler = Array.from({ length: 64 }, (_, i) => toolCall({ args: { i } }, task));
    const packets = [...calls, ...outputs, ...deps, ...filler].map((p, i) => kafka(p, i));
    const outcomes = await writer.write(packets);
    expect(outcomes.map((o) => o.status)).toEqual(packets.map(() => 'accepted'));

    const decoded = packets.map((p) => decodePacket(p, 1 << 20));
    const want = (kind: string) =>
      decoded.flatMap((d) => (d.ok && d.value.kind === kind ? [d.value.row as unknown as Record<string, unknown>] : [])).map((r) => JSON.stringify(r));
    const got = async (table: string, columns: string) =>
      (await rows<Record<string, unknown>>(ch, `SELECT ${columns} FROM {db:Identifier}.{t:Identifier} SETTINGS output_format_json_quote_64bit_integers = 0`, { db, t: table })).map((r) =>
        JSON.stringify(r),
      );
    const invCols =
      'toString(call_id) AS call_id, task_id, tool_id, agent_id, toString(orchestrator) AS orchestrator, instance_id, args, args_hash, toString(status) AS status, duration_ms, result_summary, error, cost_usd, tokens_used, toString(created_at) AS created_at, fingerprint, source, approval, redactions';
    expect((await got('tool_invocations', invCols)).sort()).toEqual(want('invocation').sort());
    const outCols =
      'toString(output_id) AS output_id, toString(call_id) AS call_id, tool_id, toString(content_type) AS content_type, content_hash, size_bytes, sample, toString(created_at) AS created_at, fingerprint, source, redactions';
    expect((await got('tool_outputs', outCols)).sort()).toEqual(want('output').sort());
    const depCols =
      'task_id, toString(preceding_call_id) AS preceding_call_id, toString(succeeding_call_id) AS succeeding_call_id, preceding_tool_id, succeeding_tool_id, time_delta_ms, data_flow, toString(origin) AS origin, fingerprint, source';
    expect((await got('tool_workflows', depCols)).sort()).toEqual(want('dependency').sort());
    const contents = await rows<{ content: string }>(ch, 'SELECT content FROM {db:Identifier}.output_contents', { db });
    expect(contents.map((c) => c.content).sort()).toEqual(outputs.map((o) => o.content).sort());
  });

  it('judges batches that share a commit round as if committed one after another', async () => {
    const { ch, db } = await freshDatabase('writer');
    const metrics = new MetricsRegistry();
    const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics, logger: silentLogger() });
    const a = toolCall({ args: { q: 'a' } });
    const b = toolCall({ args: { q: 'b' } });
    const reuse = toolCall({ call_id: a.call_id, args: { q: 'different' } });
    const poison = '{"type": "tool_call", broken';
    // Issued together: decoded one after another, then committed as one round.
    const results = await Promise.all([
      writer.write([kafka(a, 0), kafka(b, 1)]),
      writer.write([kafka(a, 2), kafka(reuse, 3), kafka(poison, 4)]),
      writer.write([kafka(b, 5), kafka(reuse, 6), kafka(poison, 4)]),
    ]);
    expect(results.map((r) => r.map((o) => o.reason?.code ?? o.status))).toEqual([
      ['accepted', 'accepted'],
      ['duplicate', 'I1_call_id_reused', 'malformed_json'],
      ['duplicate', 'I1_call_id_reused', 'malformed_json'],
    ]);
    expect(metrics.value('tool_audit_ingest_commit_rounds_total')).toBe(1);
    expect(await count(ch, db, 'tool_invocations')).toBe(2);
    // Quarantine once per transport position: offsets 3, 4 and 6.
    const q = await rows<{ source_key: string; reason_code: string }>(ch, 'SELECT source_key, reason_code FROM {db:Identifier}.quarantine ORDER BY source_key', { db });
    expect(q).toEqual([
      { source_key: 'kafka:writer-test/0@3', reason_code: 'I1_call_id_reused' },
      { source_key: 'kafka:writer-test/0@4', reason_code: 'malformed_json' },
      { source_key: 'kafka:writer-test/0@6', reason_code: 'I1_call_id_reused' },
    ]);
    // Redelivered after a restart (no cache): nothing new anywhere.
    const restarted = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics: new MetricsRegistry(), logger: silentLogger() });
    const again = await restarted.write([kafka(a, 0), kafka(b, 1), kafka(reuse, 3), kafka(poison, 4)]);
    expect(again.map((o) => o.reason?.code ?? o.status)).toEqual(['duplicate', 'duplicate', 'I1_call_id_reused', 'malformed_json']);
    expect(await count(ch, db, 'tool_invocations')).toBe(2);
    expect(await count(ch, db, 'quarantine')).toBe(3);
  });

  it('stores 64-bit fingerprints, and judges rows stored with all 32 digits (before) by their first 16', async () => {
    const { ch, db } = await freshDatabase('writer');
    const door = doorOf(ch, db);
    const writer = () => createSegmentWriter({ clickhouse: door, maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics: new MetricsRegistry(), logger: silentLogger() });
    const call = toolCall({ args: { q: 'old' } });
    const output = outputArtifact(call.call_id, 'old content', 'text');
    const dep = dependency({ task_id: call.invocation.task_id, preceding_call_id: call.call_id });
    const stored = [call, output, dep].map((p, i) => kafka(p, i));
    expect((await writer().write(stored)).map((o) => o.status)).toEqual(['accepted', 'accepted', 'accepted']);
    const fps = async () => (await rows<{ fp: string }>(ch, 'SELECT fingerprint AS fp FROM {db:Identifier}.tool_invocations UNION ALL SELECT fingerprint FROM {db:Identifier}.call_keys UNION ALL SELECT fingerprint FROM {db:Identifier}.tool_outputs UNION ALL SELECT fingerprint FROM {db:Identifier}.output_keys UNION ALL SELECT fingerprint FROM {db:Identifier}.tool_workflows', { db })).map((r) => r.fp);
    expect(await fps()).toHaveLength(5);
    for (const fp of await fps()) expect(fp).toMatch(/^[0-9a-f]{16}0{16}$/);
    // As an earlier version stored them: the same first 16 digits, then 16 more of the digest.
    for (const table of ['tool_invocations', 'call_keys', 'tool_outputs', 'output_keys', 'tool_workflows']) {
      await door.command(`ALTER TABLE {db:Identifier}.${table} UPDATE fingerprint = concat(substring(fingerprint, 1, 16), '9e3779b97f4a7c15') WHERE 1 SETTINGS mutations_sync = 2`);
    }
    for (const fp of await fps()) expect(fp).toMatch(/^[0-9a-f]{16}9e3779b97f4a7c15$/);
    // Redelivered to a new writer (nothing cached): duplicates; the same keys with other content: I1.
    const reuse = [toolCall({ call_id: call.call_id, args: { q: 'new' } }), outputArtifact(call.call_id, 'other content', 'text', { output_id: output.output.output_id }), { ...dep, dependency: { ...dep.dependency, data_flow: 'another' } }];
    const outcomes = await writer().write([...stored, ...reuse.map((p, i) => kafka(p, 10 + i))]);
    expect(outcomes.map((o) => o.reason?.code ?? o.status)).toEqual(['duplicate', 'duplicate', 'duplicate', 'I1_call_id_reused', 'I1_output_id_reused', 'I1_dependency_reused']);
    expect([await count(ch, db, 'tool_invocations'), await count(ch, db, 'tool_outputs'), await count(ch, db, 'tool_workflows')]).toEqual([1, 1, 1]);
  });

  it('quarantines awkward ids, topics and bytes exactly (TabSeparated quarantine lines)', async () => {
    const { ch, db } = await freshDatabase('writerq');
    const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics: new MetricsRegistry(), logger: silentLogger() });
    // Schema-rejected packets keep the ids they carry, whatever they hold.
    const packets: RawPacket[] = AWKWARD.map((s, i) => ({
      raw: JSON.stringify({ type: 'tool_call', call_id: `${s}'[]`, invocation: { call_id: `${s}'[]` } }),
      source: { kind: 'kafka', topic: `topic ${s}`, partition: i, offset: String(i) },
    }));
    const outcomes = await writer.write(packets);
    expect(outcomes.map((o) => o.reason?.code)).toEqual(packets.map(() => 'schema'));
    const got = await rows<{ source_key: string; ids: string[]; raw: string; reason: string }>(
      ch,
      'SELECT source_key, ids, raw, reason FROM {db:Identifier}.quarantine ORDER BY partition',
      { db },
    );
    expect(got).toEqual(packets.map((p, i) => ({ source_key: `kafka:topic ${AWKWARD[i]}/${i}@${i}`, ids: outcomes[i]?.ids, raw: p.raw, reason: outcomes[i]?.reason?.message })));
  });
});
