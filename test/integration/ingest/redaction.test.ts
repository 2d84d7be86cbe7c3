/**
 * Secrets never stored, through the segment writer on embedded ClickHouse, decoded on
 * the main thread and on a decode thread: a corpus of realistic fake secrets in args, summaries,
 * errors, text and JSON contents, and in rejected packets. Oracles: the secrets themselves (none
 * may appear in any stored text), placeholders computed here with HMAC-SHA-256 under the test's
 * key, SHA-256 of what is stored, and the writer's outcomes for a redelivery and for the same call
 * redacted by its emitter.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RawPacket } from '../../../ingest/rows.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { canonicalArgs } from '../../../schemas/canonical-json.ts';
import type { RedactionPolicy } from '../../../schemas/redaction-policy.ts';
import { doorOf, freshDatabase } from '../../helpers/clickhouse.ts';
import { outputArtifact, toolCall } from '../../helpers/packets.ts';

const KEY = 'test-redaction-key-0123456789abcdef';
const POLICY: RedactionPolicy = { key: KEY, paths: { search_web: ['args.password'] } };
const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
/** The placeholder as docs/design.md defines it, computed here. */
const mark = (rule: string, secret: string) => `[redacted:${rule}:${createHmac('sha256', KEY).update(secret).digest('hex').slice(0, 16)}]`;

const AWS = 'AKIAIOSFODNN7EXAMPLE';
const GH = `ghp_${'a1B2c3D4e5'.repeat(4)}`;
const BEARER = `tok_${'Zx9Qw8Er7Ty6'.repeat(3)}`;
const URL_PW = 's3cr3t-Pa55';
const CARD = '4111 1111 1111 1111';
const PASSWORD = 'hunter2-correct-horse';
const PEM = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7Yq\n-----END RSA PRIVATE KEY-----';
const SECRETS = [AWS, GH, BEARER, URL_PW, CARD, PASSWORD, PEM, 'MIIEowIBAAKCAQEA7Yq'];

let offset = 0;
const kafka = (value: unknown): RawPacket => ({ raw: JSON.stringify(value), source: { kind: 'kafka', topic: 'redaction-test', partition: 0, offset: String(offset++) } });

const ARGS = { query: `deploy with ${AWS}`, password: PASSWORD, headers: { Authorization: `Bearer ${BEARER}` }, db: `postgres://app:${URL_PW}@db:5432/x`, n: 1.5 };
const STORED_ARGS = { query: `deploy with ${mark('aws_access_key', AWS)}`, password: mark('path', PASSWORD), headers: { Authorization: mark('secret_name', `Bearer ${BEARER}`) }, db: `postgres://app:${mark('url_password', URL_PW)}@db:5432/x`, n: 1.5 };

describe.each([0, 1])('ingest redaction (decode threads: %i)', (threads) => {
  it('stores no secret anywhere, keeps I5 and fingerprints, and repeats stay repeats', async () => {
    const { ch, db } = await freshDatabase(`redact${threads}`);
    const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics: new MetricsRegistry(), logger: silentLogger(), decodeThreads: threads, redaction: POLICY });
    const a = toolCall({ args: ARGS, status: 'error', error: `401 for token ${GH}`, result_summary: { card: CARD } }, 'task-r');
    const b = toolCall({ args: ARGS }, 'task-r'); // the same args in another call: a repeat
    // The same call as `a`, as its emitter sends it redacted with the same policy (written out
    // here, not made by the code under test): one call, not an I1 conflict.
    const aEdge = toolCall({ ...a.invocation, args: STORED_ARGS, args_hash: sha(canonicalArgs(STORED_ARGS)), result_summary: { card: mark('card_number', CARD) }, error: `401 for token ${mark('github_token', GH)}` }, 'task-r');
    const text = outputArtifact(a.call_id, `key file:\n${PEM}\nend`);
    const json = outputArtifact(a.call_id, JSON.stringify({ rows: [{ card: CARD }] }), 'json');
    const bad = toolCall({ args: { token: GH }, status: 'success', error: `boom ${AWS}` }); // I3: quarantined
    const reuse = toolCall({ call_id: b.call_id, args: { password: PASSWORD, q: `Bearer ${BEARER}` } }, 'task-r'); // I1: quarantined

    const outcomes = await writer.write([a, a, b, aEdge, text, json, bad, reuse].map(kafka));
    expect(outcomes.map((o) => o.status)).toEqual(['accepted', 'duplicate', 'accepted', 'duplicate', 'accepted', 'accepted', 'rejected', 'rejected']);

    const calls = await (await ch.query({ query: 'SELECT toString(call_id) AS id, args, args_hash, result_summary, error, redactions FROM {db:Identifier}.tool_invocations ORDER BY error', query_params: { db }, format: 'JSONEachRow' })).json<Record<string, string>>();
    expect(calls).toHaveLength(2);
    for (const c of calls) {
      expect(JSON.parse(c.args as string)).toEqual(STORED_ARGS);
      expect(c.args_hash).toBe(sha(canonicalArgs(STORED_ARGS)));
    }
    const stored = calls.find((c) => c.id === a.call_id) as Record<string, string>;
    expect(stored.error).toBe(`401 for token ${mark('github_token', GH)}`);
    expect(JSON.parse(stored.result_summary as string)).toEqual({ card: mark('card_number', CARD) });
    expect(JSON.parse(stored.redactions as string)).toEqual([
      { pointer: '/args/db', rule: 'url_password' },
      { pointer: '/args/headers/Authorization', rule: 'secret_name' },
      { pointer: '/args/password', rule: 'path' },
      { pointer: '/args/query', rule: 'aws_access_key' },
      { pointer: '/error', rule: 'github_token' },
      { pointer: '/result_summary/card', rule: 'card_number' },
    ]);

    const outputs = await (await ch.query({ query: 'SELECT o.content_hash AS h, o.size_bytes AS n, o.sample AS sample, o.redactions AS redactions, c.content AS content FROM {db:Identifier}.tool_outputs o JOIN {db:Identifier}.output_contents c ON c.content_hash = o.content_hash ORDER BY o.content_type', query_params: { db }, format: 'JSONEachRow' })).json<Record<string, string | number>>();
    expect(outputs.map((o) => o.content)).toEqual([JSON.stringify({ rows: [{ card: mark('card_number', CARD) }] }), `key file:\n${mark('private_key', PEM)}\nend`]);
    for (const o of outputs) {
      expect(o.h).toBe(sha(o.content as string));
      expect(Number(o.n)).toBe(Buffer.byteLength(o.content as string));
      expect(o.sample).toBe((o.content as string).slice(0, 500));
    }
    expect(outputs.map((o) => JSON.parse(o.redactions as string))).toEqual([[{ pointer: '/content/rows/0/card', rule: 'card_number' }], [{ pointer: '/content', rule: 'private_key' }]]);

    // Quarantined packets keep no secret; where args_hash held, it holds for the stored args.
    const q = await (await ch.query({ query: 'SELECT reason_code, raw FROM {db:Identifier}.quarantine ORDER BY reason_code', query_params: { db }, format: 'JSONEachRow' })).json<{ reason_code: string; raw: string }>();
    expect(q.map((r) => r.reason_code)).toEqual(['I1_call_id_reused', 'I3_error_on_success']);
    const reused = JSON.parse(q[0]?.raw as string) as typeof reuse;
    expect(reused.invocation.args).toEqual({ password: mark('path', PASSWORD), q: `Bearer ${mark('bearer_token', BEARER)}` });
    expect(reused.invocation.args_hash).toBe(sha(canonicalArgs(reused.invocation.args)));
    // Replayed corrected (a new call_id), the stored bytes are a valid packet whose args are already redacted.
    const replay = await writer.write([kafka({ ...reused, call_id: reused.call_id.replace(/^.{8}/, '0badc0de'), invocation: { ...reused.invocation, call_id: reused.call_id.replace(/^.{8}/, '0badc0de') } })]);
    expect(replay.map((o) => o.status)).toEqual(['accepted']);

    // Nothing stored holds a secret, in any table or column.
    const everything = await (
      await ch.query({
        query: `SELECT concat(
          (SELECT arrayStringConcat(groupArray(concat(args, result_summary, ifNull(error, ''))), '\n') FROM {db:Identifier}.tool_invocations),
          (SELECT arrayStringConcat(groupArray(ifNull(sample, '')), '\n') FROM {db:Identifier}.tool_outputs),
          (SELECT arrayStringConcat(groupArray(content), '\n') FROM {db:Identifier}.output_contents),
          (SELECT arrayStringConcat(groupArray(concat(raw, reason)), '\n') FROM {db:Identifier}.quarantine)) AS text`,
        query_params: { db },
        format: 'JSONEachRow',
      })
    ).json<{ text: string }>();
    const all = everything[0]?.text ?? '';
    expect(all).toContain('[redacted:');
    for (const s of SECRETS) expect(all).not.toContain(s);
    for (const s of SECRETS) expect(all).not.toContain(JSON.stringify(s).slice(1, -1));
    await writer.close?.();
  }, 60_000);
});

describe('ingest without redaction', () => {
  it('stores what was sent and records no redactions (REDACTION=off)', async () => {
    const { ch, db } = await freshDatabase('redactoff');
    const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics: new MetricsRegistry(), logger: silentLogger() });
    const a = toolCall({ args: { key: AWS } }, `task-${randomUUID()}`);
    expect((await writer.write([kafka(a)])).map((o) => o.status)).toEqual(['accepted']);
    const rows = await (await ch.query({ query: 'SELECT args, redactions FROM {db:Identifier}.tool_invocations', query_params: { db }, format: 'JSONEachRow' })).json<{ args: string; redactions: string }>();
    expect(rows).toEqual([{ args: canonicalArgs({ key: AWS }), redactions: '' }]);
    await writer.close?.();
  });
});
