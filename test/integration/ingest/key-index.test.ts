/**
 * The key look-up path on real ClickHouse: the key filter's hashes equal ClickHouse's
 * murmurHash3_32 (so a filter loaded from ClickHouse agrees with keys hashed in JavaScript);
 * I1 stays exact for rows written long before, after the table grew and merged, by a writer
 * that never saw them; writers of one database learn each other's keys through the key log;
 * new keys are proved new without asking ClickHouse.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyHashes, murmur3 } from '../../../ingest/key-hash.ts';
import { createKeyIndex } from '../../../ingest/key-index.ts';
import type { RawPacket } from '../../../ingest/rows.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import type { ClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import { count, doorOf, freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { dependency, outputArtifact, toolCall } from '../../helpers/packets.ts';

let offset = 0;
const kafka = (value: unknown): RawPacket => ({ raw: JSON.stringify(value), source: { kind: 'kafka', topic: 'key-index-test', partition: 0, offset: String(offset++) } });
const writerOn = (ch: Parameters<typeof doorOf>[0], db: string, metrics = new MetricsRegistry()) =>
  createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics, logger: silentLogger() });
const asked = (m: MetricsRegistry, v: 'yes' | 'no') => m.value('tool_audit_ingest_key_lookups_total', { asked: v });

/** The door, counting the SELECTs it (and its lanes) started and those still running. */
function watched(d: ClickHouseDoor, w: { started: number; running: number }): ClickHouseDoor {
  return new Proxy(d, {
    get(t, p) {
      if (p === 'select')
        return async (...a: Parameters<ClickHouseDoor['select']>) => {
          w.started++;
          w.running++;
          try {
            return await t.select(...a);
          } finally {
            w.running--;
          }
        };
      if (p === 'lane') return (l: Parameters<ClickHouseDoor['lane']>[0]) => watched(t.lane(l), w);
      const v = Reflect.get(t, p) as unknown;
      return typeof v === 'function' ? (v as (...x: unknown[]) => unknown).bind(t) : v;
    },
  });
}

describe('ingest key index', () => {
  it('hashes keys exactly as ClickHouse murmurHash3_32 does', async () => {
    const { ch, db } = await freshDatabase('keyhash');
    const samples = ['', 'a', 'abcd', 'abcde', randomUUID(), `${randomUUID()}>${randomUUID()}`, 'kafka:topic/3@12345', 'Zürich — 😀', 'x'.repeat(1000)];
    const got = await rows<{ s: string; h: string; p1: string; p2: string }>(
      ch,
      "SELECT s, murmurHash3_32(s) AS h, murmurHash3_32(concat('i', s)) AS p1, murmurHash3_32(concat(s, 'i')) AS p2 FROM (SELECT arrayJoin({s:Array(String)}) AS s)",
      { s: samples, db },
    );
    expect(got.map((r) => [r.s, Number(r.h), Number(r.p1), Number(r.p2)])).toEqual(samples.map((s) => [s, murmur3(s), ...keyHashes('invocation', s)]));
  });

  it('keeps I1 exact for rows written long before, after the table grew and merged, in a writer that never saw them', async () => {
    const { ch, db } = await freshDatabase('keyold');
    const first = writerOn(ch, db);
    const old = toolCall({ created_at: new Date(Date.now() - 40 * 86_400_000).toISOString() }, 'task-old');
    const oldOutput = outputArtifact(old.call_id, 'old content');
    const oldDep = dependency({ task_id: 'task-old', preceding_call_id: old.call_id });
    expect((await first.write([old, oldOutput, oldDep].map(kafka))).map((o) => o.status)).toEqual(['accepted', 'accepted', 'accepted']);
    // The table grows past the old rows and is merged into one part.
    for (let b = 0; b < 4; b++) await first.write(Array.from({ length: 2500 }, (_, i) => kafka(toolCall({ args: { b, i } }, `task-${b}-${i % 50}`))));
    await ch.command({ query: 'OPTIMIZE TABLE {db:Identifier}.tool_invocations FINAL', query_params: { db } });
    await ch.command({ query: 'OPTIMIZE TABLE {db:Identifier}.call_keys FINAL', query_params: { db } });

    const metrics = new MetricsRegistry();
    const later = writerOn(ch, db, metrics);
    await later.ready?.(); // loaded (as serve's start-up step loads it): rounds before that ask about every key
    const fresh = Array.from({ length: 500 }, (_, i) => toolCall({ args: { fresh: i } }, 'task-fresh'));
    const reused = { ...old, invocation: { ...old.invocation, duration_ms: (old.invocation.duration_ms as number) + 1 } };
    const reusedOutput = { ...oldOutput, output: { ...oldOutput.output, created_at: '2026-11-22T10:00:01.001Z' } };
    const outcomes = await later.write([old, reused, oldOutput, reusedOutput, oldDep, ...fresh].map(kafka));
    expect(outcomes.slice(0, 5).map((o) => [o.status, o.reason?.code])).toEqual([
      ['duplicate', undefined],
      ['rejected', 'I1_call_id_reused'],
      ['duplicate', undefined],
      ['rejected', 'I1_output_id_reused'],
      ['duplicate', undefined],
    ]);
    expect(outcomes.slice(5).every((o) => o.status === 'accepted')).toBe(true);
    expect(await count(ch, db, 'tool_invocations', `call_id = '${old.call_id}'`)).toBe(1);
    // The 500 new keys were proved new by the filter: ClickHouse was asked about the 3 stored ones
    // (a false positive among 500 at ≤ 1e-3 would make it 4; the bound below allows 2).
    expect(asked(metrics, 'yes')).toBeGreaterThanOrEqual(3);
    expect(asked(metrics, 'yes')).toBeLessThanOrEqual(5);
    expect(asked(metrics, 'no')).toBeGreaterThanOrEqual(498);
  });

  it('learns keys written by another live writer through the key log', async () => {
    const { ch, db } = await freshDatabase('keylog');
    const a = writerOn(ch, db);
    const b = writerOn(ch, db);
    await a.ready?.();
    await b.ready?.();
    // Both loaded an empty database; each then writes keys the other has never seen.
    const byB = toolCall({}, 'task-b');
    const byBOut = outputArtifact(byB.call_id, 'b content');
    expect((await b.write([kafka(byB), kafka(byBOut)])).map((o) => o.status)).toEqual(['accepted', 'accepted']);
    const changed = { ...byB, invocation: { ...byB.invocation, agent_id: 'someone-else' } };
    const again = await a.write([kafka(changed), kafka(byB), kafka(byBOut)]);
    expect(again.map((o) => [o.status, o.reason?.code])).toEqual([
      ['rejected', 'I1_call_id_reused'],
      ['duplicate', undefined],
      ['duplicate', undefined],
    ]);
    // And back: b sees what a quarantined from Kafka (a redelivered poison record is not quarantined twice).
    const poison: RawPacket = { raw: '{not json', source: { kind: 'kafka', topic: 'key-index-test', partition: 9, offset: '1' } };
    expect((await a.write([poison]))[0]?.status).toBe('rejected');
    expect((await b.write([poison]))[0]?.status).toBe('rejected');
    expect(await count(ch, db, 'quarantine', "source_key = 'kafka:key-index-test/9@1'")).toBe(1);
    expect(await count(ch, db, 'tool_invocations')).toBe(1);
  });

  it('looks up awkward keys exactly (task ids and Kafka topics with quotes, backslashes, tabs and newlines)', async () => {
    const { ch, db } = await freshDatabase('keyawk');
    const task = "task 'quoted' \\ back\\slash\ttab\nnewline \\N";
    const dep = dependency({ task_id: task });
    const poison: RawPacket = { raw: '{broken', source: { kind: 'kafka', topic: "topic 'q' \\ t\tn\n", partition: 1, offset: '7' } };
    const first = writerOn(ch, db);
    expect((await first.write([kafka(dep), poison])).map((o) => o.status)).toEqual(['accepted', 'rejected']);
    // A new writer loads the filter, which cannot rule these keys out: both are looked up.
    const metrics = new MetricsRegistry();
    const later = writerOn(ch, db, metrics);
    const changed = { ...dep, dependency: { ...dep.dependency, time_delta_ms: 1 } };
    expect((await later.write([kafka(dep), kafka(changed), poison])).map((o) => o.reason?.code ?? o.status)).toEqual(['duplicate', 'I1_dependency_reused', 'malformed_json']);
    expect(asked(metrics, 'yes')).toBe(1);
    expect(await count(ch, db, 'quarantine')).toBe(2);
    expect(await count(ch, db, 'tool_workflows')).toBe(1);
  });

  it('stays exact when a key table missed rows its view should have written (a process killed between the two inserts)', async () => {
    const { ch, db } = await freshDatabase('keyview');
    // What a kill between the segment's insert and its view's leaves: rows the key tables lack.
    for (const v of ['call_keys_mv', 'output_keys_mv', 'quarantine_keys_mv']) await ch.command({ query: `DETACH VIEW ${db}.${v}` });
    const call = toolCall({}, 'task-view');
    const out = outputArtifact(call.call_id, 'view content');
    const poison: RawPacket = { raw: '{nope', source: { kind: 'kafka', topic: 'key-view', partition: 0, offset: '3' } };
    expect((await writerOn(ch, db).write([kafka(call), kafka(out), poison])).map((o) => o.status)).toEqual(['accepted', 'accepted', 'rejected']);
    for (const v of ['call_keys_mv', 'output_keys_mv', 'quarantine_keys_mv']) await ch.command({ query: `ATTACH TABLE ${db}.${v}` });
    expect(await count(ch, db, 'call_keys')).toBe(0);
    // A restarted writer gets the round again, and a changed copy of the call.
    const changed = { ...call, invocation: { ...call.invocation, duration_ms: 999 } };
    const again = await writerOn(ch, db).write([kafka(call), kafka(out), poison, kafka(changed)]);
    expect(again.map((o) => o.reason?.code ?? o.status)).toEqual(['duplicate', 'duplicate', 'malformed_json', 'I1_call_id_reused']);
    expect(await count(ch, db, 'tool_invocations')).toBe(1);
    expect(await count(ch, db, 'tool_outputs')).toBe(1);
    expect(await count(ch, db, 'quarantine', "source_key = 'kafka:key-view/0@3'")).toBe(1);
  });

  it('stops a load at close after its running statement, and returns only once none runs (the engine may then close)', async () => {
    const { ch, db } = await freshDatabase('keyclose');
    await writerOn(ch, db).write(Array.from({ length: 300 }, (_, i) => kafka(toolCall({ args: { i } }, `task-close-${i % 7}`))));
    const w = { started: 0, running: 0 };
    // 10 keys a statement: the load would take 30 statements for the calls alone.
    const index = createKeyIndex({ clickhouse: watched(doorOf(ch, db), w), maxBytes: 1 << 20, metrics: new MetricsRegistry(), chunkKeys: 10 });
    const loading = index.ready();
    while (index.progress().keys === 0) await new Promise((r) => setTimeout(r, 5));
    await index.close();
    expect(w.running).toBe(0);
    const atClose = w.started;
    await loading;
    await new Promise((r) => setTimeout(r, 200));
    expect(w.started).toBe(atClose);
    expect(index.progress()).toEqual({ state: 'idle', keys: 0 });
  });

  it('judges exactly before its filter is loaded, and keeps what it logged meanwhile', async () => {
    const { ch, db } = await freshDatabase('keyload');
    const stored = toolCall({}, 'task-stored');
    expect((await writerOn(ch, db).write([kafka(stored)])).map((o) => o.status)).toEqual(['accepted']);
    // A writer that never loaded its filter: every key is a "maybe", so the exact look-up decides.
    const metrics = new MetricsRegistry();
    const early = writerOn(ch, db, metrics);
    const fresh = toolCall({}, 'task-fresh');
    const reused = { ...stored, invocation: { ...stored.invocation, duration_ms: (stored.invocation.duration_ms as number) + 1 } };
    const outcomes = await early.write([stored, reused, fresh].map(kafka));
    expect(outcomes.map((o) => [o.status, o.reason?.code])).toEqual([
      ['duplicate', undefined],
      ['rejected', 'I1_call_id_reused'],
      ['accepted', undefined],
    ]);
    // Both call_ids (the stored one and the fresh one) were asked of ClickHouse; none ruled out.
    expect([asked(metrics, 'yes'), asked(metrics, 'no')]).toEqual([2, 0]);
    await early.ready?.();
    expect((await early.write([kafka(fresh)])).map((o) => o.status)).toEqual(['duplicate']);
    expect(await count(ch, db, 'tool_invocations')).toBe(2);

    // A key logged before the load (never stored: the load's scan cannot find it) is in the filter after it.
    const index = createKeyIndex({ clickhouse: doorOf(ch, db), maxBytes: 1 << 20, metrics: new MetricsRegistry() });
    const logged = randomUUID();
    expect(index.mayHave('invocation', logged)).toBe(true);
    await index.log([['invocation', logged]]);
    await index.ready();
    expect(index.mayHave('invocation', logged)).toBe(true);
    expect(index.mayHave('invocation', stored.call_id)).toBe(true);
    // Once loaded, a key neither stored nor logged is ruled out (the filter holds 3 keys: no false positive to expect).
    expect(index.mayHave('invocation', randomUUID())).toBe(false);
  });
});
