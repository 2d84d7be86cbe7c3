/**
 * The key filter's snapshot on real ClickHouse: a writer that starts from a snapshot
 * reads only the rows stored since it and stays exact for every key stored before and after; a
 * snapshot that cannot stand for the stored keys (rows written with old ingested_at, another
 * database, a damaged file) is not used, and every key is read instead.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RawPacket } from '../../../ingest/rows.ts';
import { readKeySnapshot } from '../../../ingest/key-snapshot.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { count, doorOf, freshDatabase } from '../../helpers/clickhouse.ts';
import { toolCall } from '../../helpers/packets.ts';

type Ch = Parameters<typeof doorOf>[0];
let offset = 0;
const kafka = (value: unknown): RawPacket => ({ raw: JSON.stringify(value), source: { kind: 'kafka', topic: 'key-snapshot-test', partition: 0, offset: String(offset++) } });
// Slack 0: the test's rows are seconds apart, and the catch-up must read only those after the snapshot.
const writerOn = (ch: Ch, db: string, path?: string) =>
  createSegmentWriter({
    clickhouse: doorOf(ch, db),
    maxPacketBytes: 1 << 20,
    dedupCacheEntries: 0,
    metrics: new MetricsRegistry(),
    logger: silentLogger(),
    ...(path ? { keySnapshot: { path, everyMs: 0, slackMs: 0 } } : {}),
  });

/** A stored call copied under a new call_id by SQL: a row no writer logged, stored `agoMs` before now. */
async function copyCall(ch: Ch, db: string, from: string, agoMs: number): Promise<string> {
  const id = randomUUID();
  await ch.command({
    query: `INSERT INTO {db:Identifier}.tool_invocations SELECT * REPLACE (toUUID({id:String}) AS call_id, now64(3) - toIntervalMillisecond({ago:UInt64}) AS ingested_at)
            FROM (SELECT * FROM {db:Identifier}.tool_invocations WHERE call_id = toUUID({from:String}))`, // (an alias would shadow call_id in a WHERE beside it)
    query_params: { db, id, from, ago: agoMs },
  });
  return id;
}

/** A packet of the stored call `id` with other content: I1 must reject it if the call is known. */
const changedCall = (id: string) => toolCall({ call_id: id, duration_ms: 4242 }, 'task-changed');

async function firstWriter(ch: Ch, db: string, path: string) {
  const calls = Array.from({ length: 50 }, (_, i) => toolCall({ args: { i } }, `task-${i % 5}`));
  const w = writerOn(ch, db, path);
  expect((await w.write(calls.map(kafka))).every((o) => o.status === 'accepted')).toBe(true);
  await w.close?.();
  expect(existsSync(path)).toBe(true);
  return calls;
}

describe('key filter snapshot', () => {
  it('starts from the snapshot, reads only the rows stored since, and stays exact for keys of both', async () => {
    const { ch, db } = await freshDatabase('ksnap');
    const path = join(mkdtempSync(join(tmpdir(), 'ksnap-')), 'filter.bin');
    const calls = await firstWriter(ch, db, path);
    const first = calls[0] as ReturnType<typeof toolCall>;
    await new Promise((r) => setTimeout(r, 20));
    const unlogged = await copyCall(ch, db, first.call_id, 0);

    const later = writerOn(ch, db, path);
    await later.ready?.();
    expect(later.progress?.()).toMatchObject({ state: 'ready', source: 'snapshot', of: 1 });
    const fresh = toolCall({ args: { fresh: true } }, 'task-fresh');
    const outcomes = await later.write([kafka(first), kafka(changedCall(first.call_id)), kafka(changedCall(unlogged)), kafka(fresh)]);
    expect(outcomes.map((o) => o.reason?.code ?? o.status)).toEqual(['duplicate', 'I1_call_id_reused', 'I1_call_id_reused', 'accepted']);
    expect(await count(ch, db, 'tool_invocations')).toBe(52);
  });

  it('reads every key instead when rows came in with an ingested_at older than the snapshot (a restore or backfill)', async () => {
    const { ch, db } = await freshDatabase('ksnapold');
    const path = join(mkdtempSync(join(tmpdir(), 'ksnap-')), 'filter.bin');
    const calls = await firstWriter(ch, db, path);
    const backfilled = await copyCall(ch, db, (calls[1] as ReturnType<typeof toolCall>).call_id, 3_600_000);
    const later = writerOn(ch, db, path);
    await later.ready?.();
    expect(later.progress?.()).toMatchObject({ state: 'ready', source: 'segments', of: 51 });
    expect((await later.write([kafka(changedCall(backfilled))]))[0]?.reason?.code).toBe('I1_call_id_reused');
  });

  it('does not use a snapshot of another database, nor a damaged file', async () => {
    const a = await freshDatabase('ksnapa');
    const path = join(mkdtempSync(join(tmpdir(), 'ksnap-')), 'filter.bin');
    await firstWriter(a.ch, a.db, path);
    const b = await freshDatabase('ksnapb');
    const other = writerOn(b.ch, b.db, path);
    await other.ready?.();
    expect(other.progress?.()).toMatchObject({ source: 'segments' });
    const damaged = join(mkdtempSync(join(tmpdir(), 'ksnap-')), 'filter.bin');
    writeFileSync(damaged, 'TAKFSNAP1\n\u0005\u0000\u0000\u0000{bad}');
    const w = writerOn(a.ch, a.db, damaged);
    await w.ready?.();
    expect(w.progress?.()).toMatchObject({ source: 'segments', of: 50 });
    // A snapshot of the layout before blocked filters (version 1): its bits would answer wrongly.
    const bytes = readFileSync(path);
    const old = join(mkdtempSync(join(tmpdir(), 'ksnap-')), 'filter.bin');
    const at = bytes.indexOf('"version":2');
    expect(at).toBeGreaterThan(0);
    writeFileSync(old, Buffer.concat([bytes.subarray(0, at), Buffer.from('"version":1'), bytes.subarray(at + 11)]));
    expect(await readKeySnapshot(old)).toEqual({ ok: false, why: 'its filter layout is version 1, this code reads 2' });
    const v1 = writerOn(a.ch, a.db, old);
    await v1.ready?.();
    expect(v1.progress?.()).toMatchObject({ source: 'segments', of: 50 });
  });
});
