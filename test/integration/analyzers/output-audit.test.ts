/**
 * M8 (outputs against their tool's output_schema) on outputs written through the segment writer,
 * against an oracle written here by hand for the test's few schemas (no JSON Schema library):
 * two manifest versions (the first reaching back), outputs in three ingest slices with late
 * created_at, json and text contents, shared contents, non-ASCII, emoji and JSON escapes.
 */
import { describe, expect, it } from 'vitest';
import { createAuditor } from '../../../analyzers/auditor.ts';
import { DEPENDENCY_JOB } from '../../../analyzers/dependency-runner.ts';
import { applyManifest } from '../../../analyzers/manifest-store.ts';
import { writeWatermark } from '../../../analyzers/store.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { outputArtifact } from '../../helpers/packets.ts';
import { rng } from '../../helpers/rng.ts';
import { manifestOf } from '../../helpers/manifests.ts';

const T0 = Date.UTC(2026, 10, 1, 10);
const MIN = 60_000;

const manifest = manifestOf;

const PRICE = { type: 'object', required: ['price'], properties: { price: { type: 'number' } } };
const V1 = manifest({
  quote: { output_schema: PRICE },
  note: { output_schema: { type: 'string', maxLength: 12 } },
  gone: { output_schema: { type: 'array' } },
  free: {},
});
const V2 = manifest({
  quote: { output_schema: { ...PRICE, required: ['price', 'currency'], properties: { ...PRICE.properties, currency: { enum: ['EUR', 'USD'] } } } },
  note: {},
  free: {},
});
const V1_AT = T0;
const V2_AT = T0 + 30 * MIN;

/** [content_type, content] per tool; contents repeat across outputs (one stored content, many outputs). */
const CONTENTS: Record<string, Array<[string, string]>> = {
  quote: [
    ['json', '{"price":3}'],
    ['json', '{"price":"3"}'],
    ['json', '{"currency":"EUR","price":1.5}'],
    ['json', '{"currency":"GBP","price":2}'],
    ['json', '{"price":4,"note":"caf\\u00e9 \\"q\\" 😀"}'],
    ['json', '[1,2]'],
    ['text', 'price: 3'],
  ],
  note: [
    ['text', 'short'],
    ['text', 'ünïcödé ok'],
    ['text', '😀'.repeat(12)],
    ['text', '😀'.repeat(13)],
    ['json', '"quoted"'],
    ['json', '{"a":1}'],
    ['text', `long ${'x'.repeat(40_000)}`],
  ],
  gone: [
    ['json', '[1]'],
    ['json', '{}'],
  ],
  free: [['json', '{"anything":true}']],
};

interface Out {
  output_id: string;
  call_id: string;
  tool: string;
  t: number;
  type: string;
  content: string;
}

/** Whether the output breaks its schema, judged by hand for the schemas above. */
function breaks(o: Out): boolean {
  const m = o.t < V2_AT ? V1 : V2;
  if (!m[o.tool]?.output_schema) return false;
  const value: unknown = o.type === 'json' ? JSON.parse(o.content) : o.content;
  const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
  const rec = value as Record<string, unknown>;
  if (o.tool === 'quote') {
    const priced = isObject && typeof rec.price === 'number';
    return m === V1 ? !priced : !(priced && (rec.currency === 'EUR' || rec.currency === 'USD'));
  }
  if (o.tool === 'note') return !(typeof value === 'string' && [...value].length <= 12);
  if (o.tool === 'gone') return !Array.isArray(value);
  throw new Error(`no oracle for ${o.tool}`);
}

function workload(seed: number): Out[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const out: Out[] = [];
  for (let i = 0; i < 240; i++) {
    const tool = pick(['quote', 'quote', 'note', 'note', 'gone', 'free']);
    const [type, content] = pick(CONTENTS[tool] as Array<[string, string]>);
    // From 10 min before the first version (judged by it) to 30 min after the second.
    const t = T0 - 10 * MIN + Math.floor(r() * 70 * MIN);
    out.push({ output_id: '', call_id: crypto.randomUUID(), tool, t, type, content });
  }
  return out;
}

describe('M8: outputs against their output_schema', () => {
  it('finds exactly the outputs the oracle finds, slice by slice, once each; nothing before a manifest', async () => {
    const { ch, db, door } = await freshDatabase('m8');
    const metrics = new MetricsRegistry();
    const writer = createSegmentWriter({ clickhouse: door, metrics, logger: silentLogger(), maxPacketBytes: 1 << 20, dedupCacheEntries: 0 });
    const outs = workload(8);
    // The auditor's clock is the real one: a slice written after a run is ingested after its bound.
    const run = () => createAuditor({ clickhouse: door, windowMs: MIN, graceMs: 0, metrics, logger: silentLogger(), now: () => Date.now() }).runOnce();
    await writeWatermark(door, DEPENDENCY_JOB, Date.now() + 3_600_000);
    const m8 = () => rows<{ ids: string[]; detail: string; packet_type: string }>(ch, "SELECT ids, detail, packet_type FROM {db:Identifier}.violations WHERE invariant = 'M8'", { db });

    let offset = 0;
    for (let slice = 0; slice < 3; slice++) {
      const part = outs.slice(slice * 80, slice * 80 + 80);
      const packets = part.map((o) => outputArtifact(o.call_id, o.content, o.type, { tool_id: o.tool, created_at: new Date(o.t).toISOString() }));
      part.forEach((o, i) => (o.output_id = packets[i]?.output.output_id as string));
      await writer.write(packets.map((p) => ({ raw: JSON.stringify(p), source: { kind: 'kafka' as const, topic: 't', partition: 0, offset: String(offset++) } })));
      if (slice === 0) {
        // No manifest yet: nothing judged, and the first manifest will reach back to this slice.
        await run();
        expect(await m8()).toEqual([]);
        await applyManifest(door, V1, V1_AT);
        await applyManifest(door, V2, V2_AT);
      }
      await run();
    }
    const want = outs.filter(breaks).map((o) => `${o.output_id},${o.call_id}`);
    const got = await m8();
    expect(got.map((v) => v.ids.join(',')).sort()).toEqual([...want].sort());
    // The workload covers each verdict: V1 and V2 breaches of quote, note by length and by type, gone.
    expect(want.length).toBeGreaterThan(20);
    expect(outs.filter((o) => !breaks(o) && o.tool !== 'free' && (V1[o.tool]?.output_schema ?? null) !== null).length).toBeGreaterThan(20);
    for (const v of got) expect(v.packet_type).toBe('output_artifact');
    const emoji = outs.find((o) => o.content === '😀'.repeat(13) && o.t < V2_AT);
    expect(emoji && got.find((v) => v.ids[0] === emoji.output_id)?.detail).toMatch(/of note fails its output schema \(version 1\): \/: must NOT have more than 12 characters/);
    // A rerun records nothing again.
    await run();
    expect((await m8()).length).toBe(got.length);
  });
});
