/**
 * GET /v1/outputs/{output_id}/content on outputs written through the segment writer: the content
 * exactly as sent (non-ASCII, emoji, JSON escapes, 300 kB), a byte limit cut at a code point with
 * `truncated`, one content shared by two outputs, 404 for an unknown or malformed id, 400 for a bad limit,
 * and the read scope. The oracle is the text the test sent and Buffer's UTF-8.
 */
import { describe, expect, it } from 'vitest';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { freshDatabase } from '../../helpers/clickhouse.ts';
import { outputArtifact, toolCall } from '../../helpers/packets.ts';
import { readApp } from '../../helpers/read-app.ts';

const READ = 'read-key-0123456789abcdef0';
const INGEST = 'ingest-key-0123456789abcde';

describe('GET /v1/outputs/{output_id}/content', () => {
  it('serves the stored content exactly, cut at a code point under max_bytes, to read keys only', async () => {
    const { door, db } = await freshDatabase('oc');
    const writer = createSegmentWriter({ clickhouse: door, metrics: new MetricsRegistry(), logger: silentLogger(), maxPacketBytes: 1 << 20, dedupCacheEntries: 0 });
    const call = toolCall({}, 'task-oc');
    const texts = {
      emoji: `Zürich 😀 \u2028 tab\there "quoted" \\ back`,
      json: '{"a":[1,2,{"é":"\\u00e9 \\"x\\""}],"n":1.0}',
      long: `${'ab😀'.repeat(50_000)}end`,
    };
    const outs = {
      emoji: outputArtifact(call.call_id, texts.emoji, 'text'),
      json: outputArtifact(call.call_id, texts.json, 'json'),
      long: outputArtifact(call.call_id, texts.long, 'text'),
      twin: outputArtifact(call.call_id, texts.emoji, 'text'),
    };
    const packets = [call, ...Object.values(outs)];
    await writer.write(packets.map((p, i) => ({ raw: JSON.stringify(p), source: { kind: 'kafka' as const, topic: 't', partition: 0, offset: String(i) } })));
    const app = readApp({ door, db, keys: [{ key: READ, scopes: ['read'] }, { key: INGEST, scopes: ['ingest'] }] });
    const get = async (url: string, key: string | null = READ) => {
      const r = await app.inject({ method: 'GET', url, headers: key ? { authorization: `Bearer ${key}` } : {} });
      return { status: r.statusCode, body: r.json() as Record<string, unknown> };
    };

    for (const name of ['emoji', 'json', 'long', 'twin'] as const) {
      const o = outs[name].output;
      const text = name === 'twin' ? texts.emoji : texts[name];
      const r = await get(`/v1/outputs/${o.output_id}/content`);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({
        output_id: o.output_id,
        call_id: call.call_id,
        tool_id: o.tool_id,
        content_type: o.content_type,
        content_hash: o.content_hash,
        size_bytes: Buffer.byteLength(text),
        created_at: o.created_at,
        content: text,
        truncated: false,
      });
    }
    // 300 kB of 'ab😀': 7 bytes per repeat; a limit inside an emoji ends before it.
    const long = outs.long.output.output_id;
    for (const max of [1, 2, 3, 4, 5, 6, 7, 1000, 100_001]) {
      const r = await get(`/v1/outputs/${long}/content?max_bytes=${max}`);
      const content = r.body.content as string;
      // The oracle: the longest prefix of whole code points within max bytes.
      let want = '';
      for (const ch of texts.long) {
        if (Buffer.byteLength(want + ch) > max) break;
        want += ch;
      }
      expect(content).toBe(want);
      expect(r.body.truncated).toBe(true);
    }
    expect((await get(`/v1/outputs/${long}/content?max_bytes=${Buffer.byteLength(texts.long)}`)).body.truncated).toBe(false);

    expect((await get('/v1/outputs/3b241101-e2bb-4255-8caf-4136c566a962/content')).status).toBe(404);
    expect((await get('/v1/outputs/not-a-uuid/content')).status).toBe(404);
    expect((await get(`/v1/outputs/${long}/content?max_bytes=0`)).status).toBe(400);
    expect((await get(`/v1/outputs/${long}/content`, null)).status).toBe(401);
    expect((await get(`/v1/outputs/${long}/content`, INGEST)).status).toBe(403);
    await app.close();
  });
});
