/**
 * `tool-audit verify-proof FILE --public-key K`: checks a proof of inclusion (GET
 * /v1/calls/{call_id}/proof) offline, with no access to the server or the database. K is the
 * audit log's public key (base64 DER or PEM, or a file holding it) as you pinned it. Exit 0 when
 * every check holds, 1 when one does not, 2 on bad arguments.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { checkConsistency, checkProof, type ConsistencyFile, type ProofFile } from '../analyzers/audit-log/proof-check.ts';
import { publicKeyArg } from './audit-log-key.ts';
import { USAGES } from './usage.ts';

/** Runs the command; returns the exit status. */
export function verifyProof(argv: string[]): number {
  let file: string | undefined;
  let key: string | undefined;
  try {
    const { values, positionals } = parseArgs({ args: argv, strict: true, allowPositionals: true, options: { 'public-key': { type: 'string' } } });
    [file] = positionals;
    key = values['public-key'];
  } catch (err) {
    process.stderr.write(`tool-audit verify-proof: ${(err as Error).message}\n${USAGES['verify-proof']}\n`);
    return 2;
  }
  if (!file || !key) {
    process.stderr.write(`tool-audit verify-proof: give the proof FILE and --public-key\n${USAGES['verify-proof']}\n`);
    return 2;
  }
  let proof: ProofFile | ConsistencyFile;
  let publicKey;
  try {
    proof = JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8')) as ProofFile | ConsistencyFile;
    publicKey = publicKeyArg(key);
  } catch (err) {
    process.stderr.write(`tool-audit verify-proof: ${(err as Error).message}\n`);
    return 2;
  }
  // An inclusion proof has a leaf; a consistency proof two heads.
  const v = 'leaf' in proof ? checkProof(proof, publicKey) : checkConsistency(proof, publicKey);
  for (const c of v.checks) process.stdout.write(`${c.ok ? 'ok  ' : 'FAIL'} ${c.check}${c.detail ? ` (${c.detail})` : ''}\n`);
  const what = 'leaf' in proof ? `${proof.leaf.kind} ${proof.leaf.key} is leaf ${proof.leaf.index} of the tree of ${proof.head.tree_size} signed at ${new Date(proof.head.signed_at_ms).toISOString()}` : `the tree of ${proof.from.tree_size} is a prefix of the tree of ${proof.to.tree_size}`;
  process.stdout.write(v.ok ? `verified: ${what}\n` : 'NOT verified\n');
  return v.ok ? 0 : 1;
}
