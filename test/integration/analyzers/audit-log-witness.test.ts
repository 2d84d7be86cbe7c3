/**
 * The audit log's checkpoints on embedded ClickHouse, against independent code and an attacker
 * with SQL access (the store's own tables agreeing with each other):
 *  - a proof, a consistency proof, a leaf and the checkpoint the builder signed verify with the Go
 *    oracle (transparency-dev/merkle, x/mod sumdb/note), which refuses them altered or signed by
 *    another key;
 *  - leaves deleted with the builder's watermark and heads left intact: the builder refuses to
 *    sign, verify names the range against the ledger;
 *  - an output content forged under its hash is not served (409) and verify names it; a call
 *    inserted dated 2099 is never sequenced and verify names it;
 *  - verify-proof refuses a proof presenting one call's leaf as another's;
 *  - a key rotation: the new key's first checkpoint is cosigned, verify trusts the new key from
 *    the old one; a head signed by a key no checkpoint was signed by is reported.
 *  - checkpoints sent to witnesses over C2SP tlog-witness (a 409 answered with the size held, a
 *    proof from there) and to a plain endpoint; their consistency proofs check with the oracle;
 *  - checkpoints at sizes inside, at and past block edges, and a changed leaf bracketed.
 */
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAuditLogBuilder } from '../../../analyzers/audit-log/builder.ts';
import { noteVerifierKey } from '../../../analyzers/audit-log/checkpoint.ts';
import { publicKeyText } from '../../../analyzers/audit-log/heads.ts';
import { httpWitnesses } from '../../../analyzers/audit-log/witness-client.ts';
import { verifyLog } from '../../../analyzers/audit-log/verify.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { auditLogSetup, ORIGIN, RETENTION, tick } from '../../helpers/audit-log.ts';
import { outputArtifact, toolCall } from '../../helpers/packets.ts';
import { goAvailable, tlogOracle } from '../../helpers/tlog-oracle.ts';

const root = new URL('../../../', import.meta.url).pathname;
describe('audit log checkpoints', () => {
  it('proofs and checkpoints check with independent code, which refuses them altered or signed by another key', async () => {
    const t = await auditLogSetup('witness_oracle');
    const now = new Date().toISOString();
    const calls = Array.from({ length: 300 }, (_, i) => toolCall({ args: { i, note: 'héllo ✓ 🚀 — ñ' }, created_at: now }, 'task-oracle'));
    await t.write(calls.slice(0, 150));
    const b = t.builder();
    const first = await b.runOnce();
    await tick();
    await t.write(calls.slice(150));
    const second = await b.runOnce();
    expect([first.head?.tree_size, second.head?.tree_size]).toEqual([150, 300]);
    const proof = await t.queries.callProof({ callId: (calls[200] as (typeof calls)[number]).call_id });
    if ('why' in proof) throw new Error(proof.why);
    const consistency = await t.queries.logConsistency({ fromSize: 150, toSize: 300 });
    const notes = readFileSync(join(t.dir, 'checkpoints.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { note: string }).note);
    expect(proof.head.checkpoint).toBe(notes[1]);
    if (!goAvailable()) return;
    const key = noteVerifierKey(ORIGIN, t.keys.publicKey);
    const other = noteVerifierKey(ORIGIN, generateKeyPairSync('ed25519').publicKey);
    const inclusion = { index: proof.leaf.index, size: proof.head.tree_size, leaf_hash: proof.leaf.hash, path: proof.path, root: proof.head.root_hash };
    const cons = { size1: 150, size2: 300, root1: consistency?.from.root_hash as string, root2: consistency?.to.root_hash as string, proof: consistency?.proof as string[] };
    const flip = (h: string) => `${h[0] === '0' ? '1' : '0'}${h.slice(1)}`;
    const good = await tlogOracle({
      verifier_keys: [key],
      origin: ORIGIN,
      checkpoints: notes,
      inclusion: [inclusion, { ...inclusion, path: [flip(proof.path[0] as string), ...proof.path.slice(1)] }],
      consistency: [cons, { ...cons, proof: [...cons.proof.slice(0, -1), flip(cons.proof.at(-1) as string)] }],
      leaf_data: [{ data: proof.leaf.data, leaf_hash: proof.leaf.hash }, { data: proof.leaf.data.replace('"i": 200', '"i": 201'), leaf_hash: proof.leaf.hash }],
    });
    expect(good.checkpoints.map((c) => [c.ok, c.size, c.root])).toEqual([
      [true, 150, consistency?.from.root_hash],
      [true, 300, consistency?.to.root_hash],
    ]);
    expect([good.inclusion.map((c) => c.ok), good.consistency.map((c) => c.ok), good.leaf_data.map((c) => c.ok)]).toEqual([[true, false], [true, false], [true, false]]);
    const wrongKey = await tlogOracle({ verifier_keys: [other], origin: ORIGIN, checkpoints: notes });
    expect(wrongKey.checkpoints.map((c) => c.ok)).toEqual([false, false]);

    // verify-proof: the proof as served checks; the same leaf presented as another call's does not.
    const dir = mkdtempSync(join(tmpdir(), 'proof-'));
    const check = (p: unknown) => {
      writeFileSync(join(dir, 'p.json'), JSON.stringify(p));
      try {
        return { status: 0, out: execFileSync(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'verify-proof', join(dir, 'p.json'), '--public-key', key], { encoding: 'utf8' }) };
      } catch (err) {
        return { status: (err as { status: number }).status, out: String((err as { stdout: string }).stdout) };
      }
    };
    expect(check(proof)).toMatchObject({ status: 0, out: expect.stringContaining('ok   the checkpoint is signed by the key given and says this head') as unknown as string });
    const claimed = check({ ...proof, leaf: { ...proof.leaf, key: (calls[201] as (typeof calls)[number]).call_id } });
    expect(claimed.status).toBe(1);
    expect(claimed.out).toContain(`FAIL the record is the tool_call ${(calls[201] as (typeof calls)[number]).call_id} the proof names`);
    expect(check({ ...proof, leaf: { ...proof.leaf, kind: 'output' } }).status).toBe(1);
  }, 180_000);

  it('refuses a history rewritten under intact heads and watermark; verify names the range, a forged content and a future-dated call', async () => {
    const t = await auditLogSetup('witness_rewrite');
    const now = new Date().toISOString();
    const calls = Array.from({ length: 40 }, (_, i) => toolCall({ args: { i }, created_at: now }, 'task-rw'));
    const outputs = calls.slice(0, 4).map((c, i) => outputArtifact(c.call_id, `content ${i}`, 'text', { created_at: now }));
    const b = t.builder();
    const sizes: number[] = [];
    for (let k = 0; k < 4; k++) {
      await t.write(k === 0 ? [...calls.slice(0, 10), ...outputs] : calls.slice(k * 10, k * 10 + 10));
      sizes.push((await b.runOnce()).treeSize);
      await tick();
    }
    expect(sizes).toEqual([14, 24, 34, 44]);
    expect((await verifyLog(t.door, { retentionDays: RETENTION, witness: t.witness() })).findings).toEqual([]);

    // Leaves from the 20th on deleted, and a call among them; heads and watermark untouched.
    const [victim] = await t.door.select<{ k: string }>('SELECT record_key AS k FROM {db:Identifier}.audit_log_leaves WHERE leaf_index = 25');
    await t.door.command('ALTER TABLE {db:Identifier}.tool_invocations DELETE WHERE call_id = {id:UUID} SETTINGS mutations_sync = 2', { id: victim?.k });
    await t.door.command('ALTER TABLE {db:Identifier}.audit_log_leaves DELETE WHERE leaf_index >= 20 SETTINGS mutations_sync = 2');
    const refused = await b.runOnce();
    expect(refused.head).toBeUndefined();
    expect(refused.refused?.reason).toContain('fewer than the 44 of its last checkpoint');
    expect(b.refusal()?.reason).toBe(refused.refused?.reason);
    expect(t.metrics.render()).toMatch(/tool_audit_audit_log_refused 1/);
    const report = await verifyLog(t.door, { retentionDays: RETENTION, witness: t.witness() });
    const rewritten = report.findings.find((f) => f.detail.startsWith('history rewritten'));
    // The stored log agrees with the checkpoint of 14 leaves, not with that of 24: the range is [14, 24).
    expect(rewritten?.detail).toContain('leaves in [14, 24)');
    expect(report.witness).toMatchObject({ checkpoints: 4, checked: 4, agreedTo: 14 });

    // A content forged under its hash: never served, named by verify.
    const out = outputs[1] as (typeof outputs)[number];
    await t.door.command("INSERT INTO {db:Identifier}.output_contents (content_hash, content_type, content, size_bytes, last_seen) VALUES ({h:String}, 'text', 'forged', 6, now64(3) + INTERVAL 1 DAY)", { h: out.output.content_hash });
    await t.door.command('OPTIMIZE TABLE {db:Identifier}.output_contents FINAL');
    await expect(t.queries.outputContent({ outputId: out.output.output_id, maxBytes: 1000 })).rejects.toMatchObject({ code: 'INTEGRITY' });
    expect((await t.queries.outputContent({ outputId: (outputs[0] as (typeof outputs)[number]).output.output_id, maxBytes: 1000 }))?.content).toBe('content 0');
    // Cut short, a genuine content is still served: its whole stored text is what is hashed.
    expect(await t.queries.outputContent({ outputId: (outputs[0] as (typeof outputs)[number]).output.output_id, maxBytes: 3 })).toMatchObject({ content: 'con', truncated: true });
    // A call inserted dated 2099: never sequenced, named by verify.
    const future = randomUUID();
    await t.door.command(
      `INSERT INTO {db:Identifier}.tool_invocations SELECT * REPLACE (toUUID({id:String}) AS call_id, toDateTime64('2099-01-01 00:00:00', 3, 'UTC') AS ingested_at) FROM (SELECT * FROM {db:Identifier}.tool_invocations WHERE call_id = {from:UUID})`,
      { id: future, from: (calls[0] as (typeof calls)[number]).call_id },
    );
    await b.runOnce();
    const [logged] = await t.door.select<{ n: string }>("SELECT count() AS n FROM {db:Identifier}.audit_log_leaves WHERE record_key = {k:String}", { k: future });
    expect(Number(logged?.n)).toBe(0);
    const after = await verifyLog(t.door, { retentionDays: RETENTION, witness: t.witness() });
    expect(after.findings.filter((f) => f.what === 'content').map((f) => f.key)).toEqual([out.output.content_hash]);
    expect(after.findings.filter((f) => f.what === 'future').map((f) => f.key)).toEqual([future]);
  }, 180_000);

  it('trusts a rotated key through its cosigned checkpoint, and reports a head of a key never witnessed', async () => {
    const t = await auditLogSetup('witness_rotation');
    const now = new Date().toISOString();
    await t.write([toolCall({ args: { n: 1 }, created_at: now }, 'task-rot')]);
    await t.builder().runOnce();
    await tick();
    const next = generateKeyPairSync('ed25519');
    let done = false;
    const rotated = t.builder(next.privateKey, { oldKey: t.keys.privateKey, done: async () => void (done = true) });
    await t.write([toolCall({ args: { n: 2 }, created_at: now }, 'task-rot')]);
    expect((await rotated.runOnce()).head?.tree_size).toBe(2);
    expect(done).toBe(true);
    await tick();
    await t.write([toolCall({ args: { n: 3 }, created_at: now }, 'task-rot')]);
    expect((await rotated.runOnce()).head?.tree_size).toBe(3);
    const lines = readFileSync(join(t.dir, 'checkpoints.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; note?: string });
    expect(lines.map((l) => l.type)).toEqual(['checkpoint', 'checkpoint', 'rotation', 'checkpoint']);
    expect(lines[1]?.note?.match(/^\u2014 /gm)).toHaveLength(2); // new and old key
    expect(lines[3]?.note?.match(/^\u2014 /gm)).toHaveLength(1);
    // Only the old key pinned: the new one is trusted through the rotation.
    expect((await verifyLog(t.door, { retentionDays: RETENTION, publicKey: publicKeyText(next.publicKey), witness: t.witness([t.keys.publicKey]) })).findings).toEqual([]);
    // A builder with a key nobody rotated to signs on: its checkpoint and the head are reported.
    const stranger = generateKeyPairSync('ed25519');
    await tick();
    await t.write([toolCall({ args: { n: 4 }, created_at: now }, 'task-rot')]);
    await t.builder(stranger.privateKey).runOnce();
    const found = (await verifyLog(t.door, { retentionDays: RETENTION, witness: t.witness([t.keys.publicKey]) })).findings.map((f) => f.detail);
    expect(found.some((d) => d.includes('the checkpoint of 4 leaves') && d.includes('signed by no trusted key'))).toBe(true);
    expect(found.some((d) => d.includes('the newest head in ClickHouse (tree of 4)') && d.includes('a key that signed no checkpoint'))).toBe(true);
  }, 120_000);


  it('sends each checkpoint to witnesses: tlog-witness with its consistency proof (from the size a 409 names), and a plain endpoint', async () => {
    const t = await auditLogSetup('witness_http');
    const requests: Array<{ path: string; body: string }> = [];
    let conflictOnce = true;
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        requests.push({ path: req.url ?? '', body });
        if (req.url === '/plain') return void res.writeHead(204).end();
        const old = Number(/^old (\d+)\n/.exec(body)?.[1]);
        // The second checkpoint: this witness says it holds nothing of the log yet.
        if (old > 0 && conflictOnce) {
          conflictOnce = false;
          return void res.writeHead(409, { 'content-type': 'text/x.tlog.size' }).end('0\n');
        }
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`\u2014 witness.example/w1 ${Buffer.alloc(72, old % 256).toString('base64')}\n`);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const witnesses = httpWitnesses({ urls: [`${base}/add-checkpoint`, `${base}/plain`], logger: silentLogger() });
      const b = createAuditLogBuilder({ clickhouse: t.door, logger: silentLogger(), signingKey: t.keys.privateKey, origin: ORIGIN, ledger: t.ledger, witnesses, headIntervalMs: 0, graceMs: 0, now: () => Date.now() });
      const sizes: number[] = [];
      for (const n of [5, 300, 40]) {
        await t.write(Array.from({ length: n }, (_, i) => toolCall({ args: { n, i }, created_at: new Date().toISOString() }, 'task-w')));
        sizes.push((await b.runOnce()).head?.tree_size as number);
        await tick();
      }
      expect(sizes).toEqual([5, 305, 345]);
      const tlog = requests.filter((r) => r.path === '/add-checkpoint');
      // 5 from 0; 305 from 5, refused 409 (holds 0), again from 0; 345 from 305 with a proof.
      expect(tlog.map((r) => r.body.split('\n', 1)[0])).toEqual(['old 0', 'old 5', 'old 0', 'old 305']);
      expect(requests.filter((r) => r.path === '/plain').map((r) => r.body.split('\n')[1])).toEqual(['5', '305', '345']);
      const ledger = readFileSync(join(t.dir, 'checkpoints.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { note: string; cosignatures?: string[] });
      expect(ledger.map((l) => l.cosignatures?.length)).toEqual([1, 1, 1]);
      if (!goAvailable()) return;
      // The proofs sent check with independent code, between the roots of the checkpoints.
      const roots = ledger.map((l) => Buffer.from(l.note.split('\n')[2] as string, 'base64').toString('hex'));
      const sent = (r: { body: string }) => r.body.slice(0, r.body.indexOf('\n\n')).split('\n').slice(1).map((h) => Buffer.from(h, 'base64').toString('hex'));
      const last = tlog[3] as { body: string };
      const oracle = await tlogOracle({
        consistency: [
          { size1: 305, size2: 345, root1: roots[1] as string, root2: roots[2] as string, proof: sent(last) },
          { size1: 5, size2: 305, root1: roots[0] as string, root2: roots[1] as string, proof: sent(tlog[1] as { body: string }) },
        ],
      });
      expect(oracle.consistency.map((c) => c.ok)).toEqual([true, true]);
    } finally {
      server.close();
    }
  }, 120_000);

  it('proves the log against checkpoints at every kind of size (inside, at and past block edges), and brackets a changed leaf between two', async () => {
    const t = await auditLogSetup('witness_sizes');
    const b = t.builder();
    const sizes = [1, 255, 256, 257, 600, 1024, 1300];
    let n = 0;
    for (const size of sizes) {
      await t.write(Array.from({ length: size - n }, (_, i) => toolCall({ args: { k: n + i }, created_at: new Date().toISOString() }, 'task-sizes')));
      n = size;
      expect((await b.runOnce()).head?.tree_size).toBe(size);
      await tick();
    }
    const clean = await verifyLog(t.door, { retentionDays: RETENTION, witness: t.witness() });
    expect(clean.findings).toEqual([]);
    expect(clean.witness).toMatchObject({ checkpoints: 7, checked: 7, agreedTo: 1300 });
    // One leaf hash changed in the log (its row untouched): the checkpoints of 600 and less agree, 1024 and more do not.
    await t.door.command('ALTER TABLE {db:Identifier}.audit_log_leaves UPDATE leaf_hash = unhex(repeat(\'00\', 32)) WHERE leaf_index = 700 SETTINGS mutations_sync = 2');
    const report = await verifyLog(t.door, { retentionDays: RETENTION, witness: t.witness() });
    expect(report.findings.find((f) => f.detail.startsWith('history rewritten'))?.detail).toContain('leaves in [600, 1024)');
    expect(report.witness?.agreedTo).toBe(600);
    expect(report.findings.filter((f) => f.what === 'witness' && f.detail.startsWith('the checkpoint of')).map((f) => /of (\d+) leaves/.exec(f.detail)?.[1])).toEqual(['1024', '1300']);
  }, 120_000);
});
