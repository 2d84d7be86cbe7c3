/**
 * Checkpoints as signed notes, against the note format's own rules (golang.org/x/mod/sumdb/note,
 * C2SP tlog-checkpoint) written out here: the key hash is SHA-256(name ‖ "\n" ‖ 0x01 ‖ key)[:4], the
 * signature line is "— name base64(hash ‖ sig)", the body is origin, size, base64 root. The Go
 * oracle checks real checkpoints in the integration tests; this checks the parts one by one.
 */
import { createHash, generateKeyPairSync, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseCheckpoint, parseVerifierKey, signCheckpoint, signedBy, noteVerifierKey } from '../../../../analyzers/audit-log/checkpoint.ts';
import { leafKey, parseLeafData } from '../../../../analyzers/audit-log/leaf-data.ts';

const root = 'ab'.repeat(32);

describe('checkpoint notes', () => {
  it('signs origin, size and base64 root, with one line per key that the key verifies', () => {
    const a = generateKeyPairSync('ed25519');
    const b = generateKeyPairSync('ed25519');
    const note = signCheckpoint({ origin: 'example.com/log', size: 42, root }, [{ name: 'example.com/log', key: a.privateKey }, { name: 'example.com/log', key: b.privateKey }]);
    const [body, sigs] = note.split('\n\n');
    expect(body).toBe(`example.com/log\n42\n${Buffer.from(root, 'hex').toString('base64')}`);
    const lines = (sigs ?? '').trim().split('\n');
    expect(lines).toHaveLength(2);
    const raw = Buffer.from((lines[0] ?? '').split(' ')[2] ?? '', 'base64');
    const pub = a.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
    const hash = createHash('sha256').update('example.com/log\n').update(Buffer.from([1])).update(pub).digest().subarray(0, 4);
    expect(raw.subarray(0, 4)).toEqual(hash);
    expect(verify(null, Buffer.from(`${body}\n`), a.publicKey, raw.subarray(4))).toBe(true);
    expect(parseCheckpoint(note)).toMatchObject({ origin: 'example.com/log', size: 42, root });
    expect([signedBy(note, 'example.com/log', a.publicKey), signedBy(note, 'example.com/log', b.publicKey), signedBy(note, 'other', a.publicKey)]).toEqual([true, true, false]);
    expect(signedBy(note.replace('\n42\n', '\n43\n'), 'example.com/log', a.publicKey)).toBe(false);
  });

  it('round-trips the verifier key and refuses a wrong hash or algorithm', () => {
    const k = generateKeyPairSync('ed25519');
    const text = noteVerifierKey('example.com/log', k.publicKey);
    const back = parseVerifierKey(text);
    expect(typeof back !== 'string' && back.key.export({ format: 'der', type: 'spki' })).toEqual(k.publicKey.export({ format: 'der', type: 'spki' }));
    expect(parseVerifierKey(text.replace(/\+[0-9a-f]{8}\+/, '+00000000+'))).toBe('the key hash does not match the name and key');
    expect(typeof parseVerifierKey('x+00000000+AgAA')).toBe('string');
  });

  it('refuses what is not a checkpoint', () => {
    for (const bad of ['', 'o\n1\nAAAA\n\n— o AAAAAAAA\n', 'o\n01\n' + Buffer.alloc(32).toString('base64') + '\n\n— o AAAAAAAA\n', 'o\n1\n' + Buffer.alloc(32).toString('base64') + '\n\nno dash\n']) {
      expect(typeof parseCheckpoint(bad)).toBe('string');
    }
  });
});

describe('leaf data read back', () => {
  it('reads fields by their UTF-8 byte length, NULL as -, and gives the kind\'s key', () => {
    const field = (v: string | null) => (v === null ? '-\n' : `${Buffer.byteLength(v)}:${v}\n`);
    const values = ['task-1', 'c1', 'c2', 'search', 'fetch', '12', null, 'analyzer', 'f'.repeat(32), 'src ✓ 🚀', '2026-11-28 00:00:00.000'];
    const data = `tool-audit leaf v1 dependency\n${values.map(field).join('')}`;
    const r = parseLeafData(data);
    if (typeof r === 'string') throw new Error(r);
    expect(r.fields.get('source')).toBe('src ✓ 🚀');
    expect(r.fields.get('data_flow')).toBeNull();
    expect(leafKey(r.kind, r.fields)).toBe('task-1/c1>c2/analyzer');
    expect(typeof parseLeafData(`${data}x`)).toBe('string');
    expect(typeof parseLeafData(data.replace('12:src', '11:src'))).toBe('string');
    expect(typeof parseLeafData(data.replace('dependency', 'nothing'))).toBe('string');
  });
});
