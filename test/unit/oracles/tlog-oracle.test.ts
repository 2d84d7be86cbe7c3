/**
 * The Go transparency-log oracle judged before it judges anything else: material built here from
 * the specs alone (RFC 6962 §2.1 MTH, PATH and PROOF written out recursively; the signed-note
 * format of golang.org/x/mod/sumdb/note with node:crypto Ed25519) is accepted, and each kind of
 * damage — a changed proof hash, a note signed by an untrusted key, a wrong origin, data that
 * does not hash to its leaf — is refused. Nothing of the project's own Merkle or signing code is
 * used, so a pass here says the oracle discriminates, not that two copies of one bug agree.
 */
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { goAvailable, noteVerifierKey, tlogOracle } from '../../helpers/tlog-oracle.ts';

const sha = (...parts: Uint8Array[]) => parts.reduce((h, p) => h.update(p), createHash('sha256')).digest();
const leaf = (data: string) => sha(Buffer.from([0]), Buffer.from(data, 'utf8'));
const node = (l: Buffer, r: Buffer) => sha(Buffer.from([1]), l, r);
/** The largest power of two below n (n > 1): where RFC 6962 splits a tree. */
const split = (n: number) => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};
/** RFC 6962 §2.1: MTH over leaf hashes. */
function mth(d: Buffer[]): Buffer {
  if (d.length === 0) return sha();
  if (d.length === 1) return d[0] as Buffer;
  const k = split(d.length);
  return node(mth(d.slice(0, k)), mth(d.slice(k)));
}
/** RFC 6962 §2.1.1: PATH(m, D[n]), leaf to root. */
function path(m: number, d: Buffer[]): Buffer[] {
  if (d.length <= 1) return [];
  const k = split(d.length);
  return m < k ? [...path(m, d.slice(0, k)), mth(d.slice(k))] : [...path(m - k, d.slice(k)), mth(d.slice(0, k))];
}
/** RFC 6962 §2.1.2: SUBPROOF(m, D[n], b); PROOF(m, D[n]) is SUBPROOF(m, D[n], true). */
function subproof(m: number, d: Buffer[], b: boolean): Buffer[] {
  if (m === d.length) return b ? [] : [mth(d)];
  const k = split(d.length);
  return m <= k ? [...subproof(m, d.slice(0, k), b), mth(d.slice(k))] : [...subproof(m - k, d.slice(k), false), mth(d.slice(0, k))];
}

/** A signed note: body, blank line, one "— <name> <base64(key hash ‖ signature)>" line per key. */
function signNote(body: string, signers: Array<{ name: string; key: KeyObject; verifier: string }>): string {
  const lines = signers.map(({ name, key, verifier }) => {
    const keyHash = Buffer.from(verifier.split('+')[1] as string, 'hex');
    return `— ${name} ${Buffer.concat([keyHash, sign(null, Buffer.from(body, 'utf8'), key)]).toString('base64')}\n`;
  });
  return `${body}\n${lines.join('')}`;
}
function signer(name: string) {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { name, key: privateKey, verifier: noteVerifierKey(name, publicKey) };
}
const flip = (hex: string) => (hex[0] === '0' ? '1' : '0') + hex.slice(1);

const ORIGIN = 'tool-audit.test/log';
const texts = Array.from({ length: 7 }, (_, i) => `{"call":${i},"tool":"ü-${i}"}`);
const leaves = texts.map(leaf);
const hex = (b: Buffer) => b.toString('hex');
const root3 = mth(leaves.slice(0, 3));
const root7 = mth(leaves);
const body = `${ORIGIN}\n7\n${root7.toString('base64')}\n`;

describe.skipIf(!goAvailable())('tlog oracle (Go: transparency-dev/merkle, x/mod sumdb/note, formats/log)', () => {
  it(
    'accepts spec-built proofs, leaves and checkpoints, and refuses each kind of damage',
    async () => {
      const log = signer('tool-audit.test/log-key-1');
      const next = signer('tool-audit.test/log-key-2');
      const stranger = signer('tool-audit.test/log-key-1');
      const inclusion = { index: 5, size: 7, leaf_hash: hex(leaves[5] as Buffer), path: path(5, leaves).map(hex), root: hex(root7) };
      const consistency = { size1: 3, size2: 7, root1: hex(root3), root2: hex(root7), proof: subproof(3, leaves, true).map(hex) };
      const answer = await tlogOracle({
        verifier_keys: [log.verifier, next.verifier],
        origin: ORIGIN,
        checkpoints: [
          signNote(body, [log]),
          signNote(body, [stranger]),
          signNote(body, [log, next]),
          signNote(body.replace(ORIGIN, `${ORIGIN}-other`), [log]),
          signNote(body, [log]).replace('\n7\n', '\n8\n'),
        ],
        inclusion: [
          inclusion,
          { ...inclusion, path: inclusion.path.map((h, i) => (i === 1 ? flip(h) : h)) },
          { ...inclusion, index: 4 },
        ],
        consistency: [consistency, { ...consistency, proof: consistency.proof.map((h, i) => (i === 0 ? flip(h) : h)) }, { ...consistency, size1: 4 }],
        leaf_data: [
          { data: texts[2] as string, leaf_hash: hex(leaves[2] as Buffer) },
          { data: texts[2] as string, leaf_hash: hex(leaves[3] as Buffer) },
        ],
      });
      const [good, foreign, cosigned, otherOrigin, altered] = answer.checkpoints;
      const name = (s: { verifier: string }) => s.verifier.split('+').slice(0, 2).join('+');

      expect(good).toEqual({ ok: true, size: 7, root: hex(root7), origin: ORIGIN, signed_by: [name(log)] });
      // Same name as the trusted key but another key, hence another key hash: not the log's signature.
      expect(foreign).toMatchObject({ ok: false, signed_by: [] });
      expect(foreign?.size).toBeUndefined();
      expect(cosigned).toMatchObject({ ok: true, size: 7 });
      expect([...(cosigned?.signed_by ?? [])].sort()).toEqual([name(log), name(next)].sort());
      expect(otherOrigin).toMatchObject({ ok: false, signed_by: [name(log)] });
      expect(otherOrigin?.error).toMatch(/origin/i);
      expect(altered).toMatchObject({ ok: false, signed_by: [] });

      expect(answer.inclusion.map((r) => r.ok)).toEqual([true, false, false]);
      expect(answer.consistency.map((r) => r.ok)).toEqual([true, false, false]);
      expect(answer.leaf_data.map((r) => r.ok)).toEqual([true, false]);
      for (const r of [...answer.inclusion, ...answer.consistency, ...answer.leaf_data].filter((r) => !r.ok)) expect(r.error).toBeTruthy();
    },
    // The first run builds the oracle: modules through the Go proxy and a cold compile.
    180_000,
  );

  it('answers empty lists for a question without any, and refuses malformed input', async () => {
    expect(await tlogOracle({})).toEqual({ checkpoints: [], inclusion: [], consistency: [], leaf_data: [] });
    await expect(tlogOracle({ leaf_data: [{ data: 'x', leaf_hash: 'not hex' }] })).rejects.toThrow(/bad input/);
    await expect(tlogOracle({ verifier_keys: ['not a key'] })).rejects.toThrow(/bad input/);
    // A misspelt field must not read as an empty (hence passing) list.
    await expect(tlogOracle({ inclusions: [] } as never)).rejects.toThrow(/unknown field/);
  }, 180_000);
});

describe('noteVerifierKey', () => {
  it('writes name, key hash and the algorithm-prefixed key as the note format does', () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    const key = noteVerifierKey('example.com/log', publicKey);
    // Split on the first two "+" only: standard base64 has "+" of its own.
    const [name, hash, ...b64] = key.split('+');
    const raw = Buffer.from(b64.join('+'), 'base64');
    expect(name).toBe('example.com/log');
    expect(raw.length).toBe(33);
    expect(raw[0]).toBe(1);
    expect(hash).toBe(sha(Buffer.from('example.com/log\n'), raw).subarray(0, 4).toString('hex'));
    expect(() => noteVerifierKey('a+b', publicKey)).toThrow();
    expect(() => noteVerifierKey('a b', publicKey)).toThrow();
  });
});
