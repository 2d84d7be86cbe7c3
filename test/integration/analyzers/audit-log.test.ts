/**
 * The audit log on embedded ClickHouse: calls, outputs, dependencies and violations
 * written by the segment writer become one leaf each, in the order stored, and a redelivery adds
 * none; the signed head's root is RFC 9162's over the leaves (schemas/merkle.ts, itself tested
 * against the RFC's definition); a proof served for a call checks offline with the pinned key
 * (`tool-audit verify-proof` as a process) and fails for a changed proof or another key. Then the
 * store is tampered with as an attacker with write access would — one field changed by ALTER
 * UPDATE, a row deleted, a forged row inserted, a part dropped, two leaves swapped — and `verify`
 * reports exactly those records, and nothing when untouched.
 */
import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAuditLogBuilder } from '../../../analyzers/audit-log/builder.ts';
import { headSigned, publicKeyText } from '../../../analyzers/audit-log/heads.ts';
import { fileLedger } from '../../../analyzers/audit-log/ledger.ts';
import { doorSelect, latestHead, logTiles } from '../../../analyzers/audit-log/log-store.ts';
import type { Finding } from '../../../analyzers/audit-log/finding.ts';
import { verifyLog } from '../../../analyzers/audit-log/verify.ts';
import type { RawPacket } from '../../../ingest/rows.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { createReadQueries } from '../../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { rootOf } from '../../../schemas/merkle.ts';
import { doorOf, freshDatabase } from '../../helpers/clickhouse.ts';
import { client, quarantineApp } from '../../helpers/quarantine-app.ts';
import { dependency, outputArtifact, toolCall } from '../../helpers/packets.ts';

const root = new URL('../../../', import.meta.url).pathname;
const RETENTION = { tool_call: 90, output: 30, dependency: 30, violation: 90 };
let offset = 0;
const kafka = (value: unknown): RawPacket => ({ raw: JSON.stringify(value), source: { kind: 'kafka', topic: 'audit-log-test', partition: 0, offset: String(offset++) } });
const sha = (b: Buffer) => createHash('sha256').update(b).digest();

describe('audit log', () => {
  it('logs every record once, proves a call offline, and verify names exactly what was tampered with', async () => {
    const { ch, db, door } = await freshDatabase('auditlog');
    const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics: new MetricsRegistry(), logger: silentLogger() });
    const now = new Date().toISOString();
    const calls = Array.from({ length: 300 }, (_, i) => toolCall({ args: { i }, created_at: now }, `task-${i % 7}`));
    const outputs = calls.slice(0, 40).map((c) => outputArtifact(c.call_id, `out ${c.call_id}`, 'text', { created_at: now }));
    const deps = calls.slice(0, 10).map((c, i) => dependency({ task_id: c.invocation.task_id, preceding_call_id: c.call_id, succeeding_call_id: (calls[i + 1] as typeof c).call_id }));
    expect((await writer.write([...calls, ...outputs, ...deps].map(kafka))).every((o) => o.status === 'accepted')).toBe(true);
    await door.insertRows('violations', [{ key: 'v1', row: { violation_key: `I4:${calls[3]?.call_id}`, invariant: 'I4', packet_type: 'tool_call', ids: [calls[3]?.call_id], detail: 'no error message' } }]);
    const records = calls.length + outputs.length + deps.length + 1;

    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const ledger = fileLedger(mkdtempSync(join(tmpdir(), 'ledger-')));
    const builder = createAuditLogBuilder({ clickhouse: door, logger: silentLogger(), signingKey: privateKey, origin: 'tool-audit/test', ledger, headIntervalMs: 0, graceMs: 0, stepRows: 128, now: () => Date.now() + 1000 });
    const first = await builder.runOnce();
    expect(first).toMatchObject({ added: records, treeSize: records });
    // A redelivery stores no second row, so it adds no leaf; nor does a run with nothing new.
    expect((await writer.write(calls.slice(0, 20).map(kafka))).every((o) => o.status === 'duplicate')).toBe(true);
    expect(await builder.runOnce()).toMatchObject({ added: 0, treeSize: records });

    // The head: signed by the key, its root RFC 9162's over the stored leaves in index order.
    const head = await latestHead(doorSelect(door));
    expect(head?.tree_size).toBe(records);
    expect(headSigned(head!, publicKey)).toBe(true);
    expect(rootOf(await logTiles(doorSelect(door)).leaves(0, records)).toString('hex')).toBe(head?.root_hash);
    const kinds = await door.select<{ kind: string; n: string }>('SELECT kind, count() AS n FROM {db:Identifier}.audit_log_leaves GROUP BY kind ORDER BY kind');
    expect(kinds.map((k) => [k.kind, Number(k.n)])).toEqual([['dependency', 10], ['output', 40], ['tool_call', 300], ['violation', 1]]);

    // A call's proof, served by the read queries, checks offline with the pinned key.
    const queries = createReadQueries(door, db, DEFAULT_QUERY_CONTEXT);
    const target = calls[5] as (typeof calls)[number];
    const proof = await queries.callProof({ callId: target.call_id });
    if ('why' in proof) throw new Error(`no proof: ${proof.why}`);
    expect(proof.leaf.data).toContain(target.call_id);
    expect(proof.leaf.hash).toBe(sha(Buffer.concat([Buffer.from([0]), Buffer.from(proof.leaf.data)])).toString('hex'));
    const dir = mkdtempSync(join(tmpdir(), 'proof-'));
    const file = join(dir, 'proof.json');
    writeFileSync(file, JSON.stringify(proof));
    const check = (f: string, key: string) => {
      try {
        return { status: 0, out: execFileSync(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'verify-proof', f, '--public-key', key], { encoding: 'utf8' }) };
      } catch (err) {
        return { status: (err as { status: number }).status, out: String((err as { stdout: string }).stdout) };
      }
    };
    expect(check(file, publicKeyText(publicKey))).toMatchObject({ status: 0, out: expect.stringContaining(`verified: tool_call ${target.call_id} is leaf`) as unknown as string });
    const forged = join(dir, 'forged.json');
    writeFileSync(forged, JSON.stringify({ ...proof, leaf: { ...proof.leaf, data: proof.leaf.data.replace('"i": 5', '"i": 6') } }));
    expect(check(forged, publicKeyText(publicKey))).toMatchObject({ status: 1, out: expect.stringContaining('FAIL the leaf is the record') as unknown as string });
    expect(check(file, publicKeyText(generateKeyPairSync('ed25519').publicKey))).toMatchObject({ status: 1, out: expect.stringContaining('FAIL the head is signed by the key given') as unknown as string });
    expect(await queries.callProof({ callId: randomUUID() })).toEqual({ why: 'unknown' });

    // More calls, a later head, and the proof that the earlier tree is a prefix of it.
    const more = Array.from({ length: 30 }, (_, i) => toolCall({ args: { more: i }, created_at: now }, 'task-more'));
    expect((await writer.write(more.map(kafka))).every((o) => o.status === 'accepted')).toBe(true);
    expect(await builder.runOnce()).toMatchObject({ added: 30, treeSize: records + 30 });
    const consistency = await queries.logConsistency({ fromSize: records, toSize: records + 30 });
    expect(consistency?.proof.length).toBeGreaterThan(0);
    const cfile = join(dir, 'consistency.json');
    writeFileSync(cfile, JSON.stringify(consistency));
    expect(check(cfile, publicKeyText(publicKey))).toMatchObject({ status: 0, out: expect.stringContaining(`the tree of ${records} is a prefix of the tree of ${records + 30}`) as unknown as string });
    writeFileSync(cfile, JSON.stringify({ ...consistency, proof: [...(consistency?.proof ?? []).slice(1), '00'.repeat(32)] }));
    expect(check(cfile, publicKeyText(publicKey)).status).toBe(1);
    // A size with no signed head while the newer has one: a conflict naming the stored root there, not "not found".
    await expect(queries.logConsistency({ fromSize: records + 1, toSize: records + 30 })).rejects.toMatchObject({ code: 'INTEGRITY', message: expect.stringContaining(`no signed head of tree size ${records + 1}`) as unknown as string });
    expect(await queries.logConsistency({ fromSize: records, toSize: records + 29 })).toBeNull();

    // Untouched: nothing to report.
    const verify = () => verifyLog(door, { retentionDays: RETENTION, publicKey: publicKeyText(publicKey) });
    expect((await verify()).findings).toEqual([]);

    // A quarantined packet replayed: as stored it still fails and stores nothing; corrected, it
    // lands once, gets one leaf, and verify has nothing to report (a replay is not tampering).
    const q = client(quarantineApp(door, { submit: (p) => writer.write(p) }));
    const good = toolCall({ args: { replayed: true }, created_at: now }, 'task-replay');
    const bad = { ...good, invocation: { ...good.invocation, args_hash: 'f'.repeat(64) } };
    expect((await q.postPackets(JSON.stringify([bad]))).json()).toMatchObject({ results: [{ status: 'rejected' }] });
    const quarantined = ((await q.get('/v1/quarantine?from=1970-01-01')).json() as { records: Array<{ quarantine_id: string; ids: string[] }> }).records.find((r) => r.ids.includes(good.call_id));
    const id = quarantined?.quarantine_id as string;
    expect((await q.replay({ ids: [id] })).json()).toMatchObject({ accepted: 0, rejected: 1 });
    // The refused packet's quarantine record is a leaf; the failed replay added no record.
    expect(await builder.runOnce()).toMatchObject({ added: 1 });
    const [logged] = await door.select<{ n: string }>("SELECT count() AS n FROM {db:Identifier}.audit_log_leaves WHERE kind = 'quarantine' AND record_key IN (SELECT source_key FROM {db:Identifier}.quarantine)");
    expect(Number(logged?.n)).toBe(1);
    // (This builder's clock runs a second ahead with no grace: what is stored next must be later.)
    await new Promise((r) => setTimeout(r, 1100));
    expect((await q.replay({ ids: [id], packets: [JSON.stringify(good)] })).json()).toMatchObject({ accepted: 1, rejected: 0 });
    expect(await builder.runOnce()).toMatchObject({ added: 1 });
    expect((await q.replay({ ids: [id], packets: [JSON.stringify(good)] })).json()).toMatchObject({ accepted: 0, duplicates: 1 });
    expect(await builder.runOnce()).toMatchObject({ added: 0 });
    expect((await verify()).findings).toEqual([]);

    // Tampering, each with its oracle.
    const altered = calls[10] as (typeof calls)[number];
    const deleted = calls[11] as (typeof calls)[number];
    await door.command('ALTER TABLE {db:Identifier}.tool_invocations UPDATE duration_ms = 1 WHERE call_id = {id:UUID} SETTINGS mutations_sync = 2', { id: altered.call_id });
    await door.command('ALTER TABLE {db:Identifier}.tool_invocations DELETE WHERE call_id = {id:UUID} SETTINGS mutations_sync = 2', { id: deleted.call_id });
    const forgedId = randomUUID();
    await door.command(
      // (in a subquery: the alias would shadow call_id in a WHERE beside it)
      `INSERT INTO {db:Identifier}.tool_invocations SELECT * REPLACE (toUUID({id:String}) AS call_id) FROM (SELECT * FROM {db:Identifier}.tool_invocations WHERE call_id = {from:UUID})`,
      { id: forgedId, from: (calls[12] as (typeof calls)[number]).call_id },
    );
    // A row's storage time changed (it leaves its slice of the log) and a second copy of a logged
    // call stored at another time: found by key outside their slices.
    const moved = calls[20] as (typeof calls)[number];
    const copied = calls[21] as (typeof calls)[number];
    await door.command('ALTER TABLE {db:Identifier}.tool_invocations UPDATE ingested_at = ingested_at - INTERVAL 1 HOUR WHERE call_id = {id:UUID} SETTINGS mutations_sync = 2', { id: moved.call_id });
    await door.command(
      `INSERT INTO {db:Identifier}.tool_invocations SELECT * REPLACE (ingested_at - INTERVAL 2 HOUR AS ingested_at) FROM (SELECT * FROM {db:Identifier}.tool_invocations WHERE call_id = {id:UUID})`,
      { id: copied.call_id },
    );
    const found = (await verify()).findings;
    const brief = (f: Finding) => `${f.what} ${f.kind ?? ''} ${f.key ?? ''}`.trim();
    const tampered = [`altered tool_call ${altered.call_id}`, `deleted tool_call ${deleted.call_id}`, `inserted tool_call ${forgedId}`, `altered tool_call ${moved.call_id}`, `inserted tool_call ${copied.call_id}`].sort();
    expect(found.map(brief).sort()).toEqual(tampered);
    expect(found.find((f) => f.key === altered.call_id)?.part).toMatch(/^\d+_\d+_\d+_\d+/);
    // The same, cut into slices of a few leaves (the one-slice run matched the moved row by key in
    // its slice; here its leaf and its row are in different slices).
    const sliced = await verifyLog(door, { retentionDays: RETENTION, chunk: 7 });
    expect(sliced.findings.map(brief).sort()).toEqual(tampered);
    // Capped: two listed, all five counted.
    const capped = await verifyLog(door, { retentionDays: RETENTION, maxFindings: 2 });
    expect(capped.findings).toHaveLength(2);
    expect(capped.found).toEqual({ altered: 2, deleted: 1, inserted: 2, log: 0, witness: 0, future: 0, content: 0 });
    // Proofs of tampered calls: the altered one and the moved one still come with their leaf, whose
    // hash the served data no longer gives; the deleted one is unknown. Their keys rows are moved an
    // hour back too (copied aside, deleted, written back: created_at is call_keys' partition key), so
    // a leaf is not found at the keys table's created_at: the intact call's then at its row's storage
    // time, and it checks; the moved call's, whose storage time changed as well, by key alone. An id
    // the keys table does not know is unknown, even when its row is stored.
    const shifted = calls[22] as (typeof calls)[number];
    const unkeyed = calls[23] as (typeof calls)[number];
    await door.command('CREATE TABLE {db:Identifier}.keys_aside AS {db:Identifier}.call_keys');
    await door.command('INSERT INTO {db:Identifier}.keys_aside SELECT * REPLACE (created_at - INTERVAL 1 HOUR AS created_at) FROM {db:Identifier}.call_keys WHERE call_id IN ({a:UUID}, {b:UUID})', { a: moved.call_id, b: shifted.call_id });
    await door.command('ALTER TABLE {db:Identifier}.call_keys DELETE WHERE call_id IN ({a:UUID}, {b:UUID}, {c:UUID}) SETTINGS mutations_sync = 2', { a: moved.call_id, b: shifted.call_id, c: unkeyed.call_id });
    await door.command('INSERT INTO {db:Identifier}.call_keys SELECT * FROM {db:Identifier}.keys_aside');
    const intact = await queries.callProof({ callId: shifted.call_id });
    if ('why' in intact) throw new Error(`no proof of ${shifted.call_id}: ${intact.why}`);
    writeFileSync(file, JSON.stringify(intact));
    expect(check(file, publicKeyText(publicKey)).status).toBe(0);
    expect(await queries.callProof({ callId: unkeyed.call_id })).toEqual({ why: 'unknown' });
    // The keys table keeps each call's task, which makes its row a primary-key read. A keys row
    // without it (stored before the keys kept tasks) finds the row through the tasks of its instant;
    // one whose task was changed, through the id's bloom filter: both proofs check.
    const untasked = calls[24] as (typeof calls)[number];
    const mistasked = calls[25] as (typeof calls)[number];
    const keyed = await door.select<{ t: string }>('SELECT task_id AS t FROM {db:Identifier}.call_keys WHERE call_id = {a:UUID}', { a: untasked.call_id });
    expect(keyed.map((r) => r.t)).toEqual([untasked.invocation.task_id]);
    await door.command(
      "ALTER TABLE {db:Identifier}.call_keys UPDATE task_id = if(call_id = {a:UUID}, '', 'task-elsewhere') WHERE call_id IN ({a:UUID}, {b:UUID}) SETTINGS mutations_sync = 2",
      { a: untasked.call_id, b: mistasked.call_id },
    );
    for (const c of [untasked, mistasked]) {
      const p = await queries.callProof({ callId: c.call_id });
      if ('why' in p) throw new Error(`no proof of ${c.call_id}: ${p.why}`);
      writeFileSync(file, JSON.stringify(p));
      expect(check(file, publicKeyText(publicKey)).status).toBe(0);
    }
    for (const c of [altered, moved]) {
      const p = await queries.callProof({ callId: c.call_id });
      if ('why' in p) throw new Error(`no proof of ${c.call_id}: ${p.why}`);
      const logged = await door.select<{ i: string; h: string }>("SELECT leaf_index AS i, lower(hex(leaf_hash)) AS h FROM {db:Identifier}.audit_log_leaves WHERE kind = 'tool_call' AND record_key = {k:String}", { k: c.call_id });
      expect([p.leaf.index, p.leaf.hash]).toEqual([Number(logged[0]?.i), logged[0]?.h]);
      expect(sha(Buffer.concat([Buffer.from([0]), Buffer.from(p.leaf.data)])).toString('hex')).not.toBe(p.leaf.hash);
    }
    expect(await queries.callProof({ callId: deleted.call_id })).toEqual({ why: 'unknown' });

    // A part of outputs dropped: every output in it is reported deleted, and nothing else is new.
    const [part] = await door.select<{ name: string; rows: string }>("SELECT name, rows FROM system.parts WHERE database = {db:String} AND table = 'tool_outputs' AND active ORDER BY rows DESC LIMIT 1");
    const inPart = await door.select<{ id: string }>('SELECT toString(output_id) AS id FROM {db:Identifier}.tool_outputs WHERE _part = {p:String}', { p: part?.name });
    expect(inPart.length).toBe(Number(part?.rows));
    await door.command('ALTER TABLE {db:Identifier}.tool_outputs DROP PART {p:String}', { p: part?.name });
    const afterDrop = (await verify()).findings.map(brief).sort();
    expect(afterDrop).toEqual([...found.map(brief), ...inPart.map((o) => `deleted output ${o.id}`)].sort());

    // Two leaves swapped in the log itself: the block's stored root no longer holds.
    // (leaf_index is the sorting key: copied aside, deleted, and written back with the indexes swapped)
    await door.command('CREATE TABLE {db:Identifier}.swap AS {db:Identifier}.audit_log_leaves');
    await door.command('INSERT INTO {db:Identifier}.swap SELECT * FROM {db:Identifier}.audit_log_leaves WHERE leaf_index IN (1, 2)');
    await door.command('ALTER TABLE {db:Identifier}.audit_log_leaves DELETE WHERE leaf_index IN (1, 2) SETTINGS mutations_sync = 2');
    await door.command('INSERT INTO {db:Identifier}.audit_log_leaves SELECT * REPLACE (if(leaf_index = 1, 2, 1) AS leaf_index) FROM {db:Identifier}.swap');
    const log = (await verify()).findings.filter((f) => f.what === 'log');
    expect(log.map((f) => f.leaf)).toEqual([0]);

    // A leaf dropped from the log: its block, now of 255 leaves, is named (verify does not fail on
    // it), and its record, stored and without a leaf now, is named too. The leaf is an untouched
    // call's in the first block: which record a given index holds depends on the storage order,
    // and an output's may be in the part dropped above (no record left to name).
    const tamperedIds = [altered, deleted, moved, copied, shifted, unkeyed].map((c) => c.call_id);
    const [cut] = await door.select<{ i: string; key: string }>(
      "SELECT leaf_index AS i, record_key AS key FROM {db:Identifier}.audit_log_leaves WHERE kind = 'tool_call' AND leaf_index BETWEEN 3 AND 255 AND record_key NOT IN {t:Array(String)} ORDER BY leaf_index LIMIT 1",
      { t: tamperedIds },
    );
    await door.command('ALTER TABLE {db:Identifier}.audit_log_leaves DELETE WHERE leaf_index = {i:UInt64} SETTINGS mutations_sync = 2', { i: Number(cut?.i) });
    const dropped = (await verify()).findings;
    expect(dropped.filter((f) => f.what === 'log').map((f) => f.leaf)).toEqual([0]);
    expect(dropped.filter((f) => f.key === cut?.key).map((f) => f.what)).toEqual(['inserted']);
    // A proof whose path needs that block's leaves is refused as an integrity failure (the read
    // routes answer it 409), never served: asked of a fresh reader, which has no path cached.
    const [whole] = await door.select<{ key: string }>(
      "SELECT record_key AS key FROM {db:Identifier}.audit_log_leaves WHERE kind = 'tool_call' AND leaf_index BETWEEN 6 AND 255 AND record_key NOT IN {t:Array(String)} LIMIT 1",
      { t: tamperedIds },
    );
    const fresh = createReadQueries(door, db, DEFAULT_QUERY_CONTEXT);
    await expect(fresh.callProof({ callId: whole?.key as string })).rejects.toMatchObject({ code: 'INTEGRITY', message: expect.stringContaining('lacks leaves') as unknown as string });
  }, 120_000);
});
