/**
 * `tool-audit audit-log <key | accept-rewrite --reason TEXT | rotate-key [--new-key FILE]>`: the
 * operator's steps on the audit log, each recorded in its ledger (AUDIT_LOG_DIR).
 *  - key: the public key and note verifier key to pin (what verify-proof and witnesses check with).
 *  - accept-rewrite: the builder refuses to sign a history that does not extend its last
 *    checkpoint; when the stored history is to be kept as it is (after an investigation, when no
 *    backup holds the old one), this records a signed reset naming both trees and the reason, and
 *    makes the current tree the last checkpoint. Verify reports the reset, and checks only the
 *    checkpoints after it. On the embedded default: stop serve first (one process per directory).
 *  - rotate-key: a new signing key; the next checkpoint is signed by the old key too (then the old
 *    key file is deleted), so whoever trusted the old key can trust the new one.
 */
import type { KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { noteVerifierKey, parseCheckpoint, signCheckpoint, signNote } from '../analyzers/audit-log/checkpoint.ts';
import { publicKeyText } from '../analyzers/audit-log/heads.ts';
import { fileLedger } from '../analyzers/audit-log/ledger.ts';
import { doorSelect, leafCount, logTiles } from '../analyzers/audit-log/log-store.ts';
import { rangeHasher } from '../analyzers/audit-log/tiles.ts';
import { silentLogger } from '../platform/logger.ts';
import { loadSigningKey, newSigningKeyPem, privateKeyFrom, retiringKeyPath, signingKeyPath } from './audit-log-key.ts';
import { configOrExit, openClickHouse } from './runtime.ts';
import { USAGES } from './usage.ts';

/** Runs the command; returns the exit status. */
export async function auditLogCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  let v;
  try {
    v = parseArgs({ args: rest, strict: true, allowPositionals: false, options: { reason: { type: 'string' }, 'new-key': { type: 'string' } } }).values;
  } catch (err) {
    return usage((err as Error).message);
  }
  if (sub === 'key') return printKey();
  if (sub === 'accept-rewrite') return v.reason?.trim() ? acceptRewrite(v.reason.trim()) : usage('accept-rewrite needs --reason TEXT (it is recorded)');
  if (sub === 'rotate-key') return rotateKey(v['new-key']);
  return usage(sub === undefined ? 'give a subcommand' : `unknown subcommand ${sub}`);
}

function usage(message: string): number {
  process.stderr.write(`tool-audit audit-log: ${message}\n${USAGES['audit-log']}\n`);
  return 2;
}

async function printKey(): Promise<number> {
  const config = configOrExit();
  const key = await loadSigningKey(config, silentLogger());
  process.stdout.write(`origin        ${config.auditLog.origin}\npublic key    ${publicKeyText(key)}\nverifier key  ${noteVerifierKey(config.auditLog.origin, key)}\n`);
  return 0;
}

async function acceptRewrite(reason: string): Promise<number> {
  const config = configOrExit();
  const { origin, dir } = config.auditLog;
  const key = await loadSigningKey(config, silentLogger());
  const ledger = fileLedger(dir);
  const lastNote = await ledger.latest();
  const last = lastNote === undefined ? undefined : parseCheckpoint(lastNote);
  const ch = await openClickHouse(config);
  let tree: { size: number; root: string };
  try {
    const size = await leafCount(ch);
    if (size === 0) {
      process.stderr.write('tool-audit audit-log: the log has no leaves: nothing to accept\n');
      return 1;
    }
    tree = { size, root: (await rangeHasher(logTiles(doorSelect(ch)))(0, size)).toString('hex') };
  } finally {
    await ch.close();
  }
  const treeLine = (t: { size: number; root: string }) => `${t.size} ${Buffer.from(t.root, 'hex').toString('base64')}`;
  const before = last && typeof last !== 'string' ? treeLine(last) : 'none';
  // The reset is a signed note too: its own first line says what it is, so it is never taken for a checkpoint.
  const text = `${origin} reset\n${before}\n${treeLine(tree)}\n${reason.replace(/\s+/g, ' ')}\n`;
  const now = Date.now();
  await ledger.append({ type: 'reset', at_ms: now, reason, note: signNote(text, [{ name: origin, key }]) });
  await ledger.addCheckpoint(signCheckpoint({ origin, ...tree }, [{ name: origin, key }]), now);
  process.stdout.write(`recorded: the history of ${tree.size} leaves (root ${tree.root}) replaces the one of the last checkpoint (${before}); reason: ${reason}\n`);
  return 0;
}

async function rotateKey(newKeyFile: string | undefined): Promise<number> {
  const config = configOrExit();
  const retiring = retiringKeyPath(config);
  if (existsSync(retiring)) return usage(`a rotation is pending (${retiring}): start the builder once so the old key cosigns a checkpoint`);
  if (config.auditLog.signingKey) {
    return usage('the key comes from AUDIT_LOG_SIGNING_KEY: write the old key to AUDIT_LOG_DIR/signing-key.retiring.pem, set AUDIT_LOG_SIGNING_KEY to the new one, and restart');
  }
  let pem: string;
  let next: KeyObject;
  try {
    pem = newKeyFile ? readFileSync(newKeyFile, 'utf8') : newSigningKeyPem();
    next = privateKeyFrom(pem, newKeyFile ?? 'the new key');
  } catch (err) {
    return usage((err as Error).message);
  }
  await loadSigningKey(config, silentLogger()); // the current key exists (made or moved) before it is retired
  await rename(signingKeyPath(config), retiring);
  await writeFile(signingKeyPath(config), pem, { mode: 0o600, flag: 'wx' });
  process.stdout.write(`new key ${noteVerifierKey(config.auditLog.origin, next)}: the next checkpoint is signed by it and by the old key; pin it\n`);
  return 0;
}
