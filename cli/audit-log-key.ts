/**
 * The audit log builder's options for a process: its signing key, origin, checkpoint ledger,
 * witnesses and a planned key rotation, all from AUDIT_LOG_DIR — beside the data directory by
 * default, never in it, so a copy or backup of the database carries neither the private key nor
 * the checkpoints it is checked against.
 *
 * The key: AUDIT_LOG_SIGNING_KEY (an Ed25519 private key, PEM or base64 PKCS#8 DER), or
 * `signing-key.pem` in AUDIT_LOG_DIR, made on first start. A key an earlier version kept inside the
 * data directory is moved out on first start. Its public part and note verifier key are logged at
 * every start: pin them where the database cannot change them.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { noteVerifierKey, parseVerifierKey } from '../analyzers/audit-log/checkpoint.ts';
import { keyId, publicKeyFrom, publicKeyText } from '../analyzers/audit-log/heads.ts';
import { fileLedger } from '../analyzers/audit-log/ledger.ts';
import { httpWitnesses } from '../analyzers/audit-log/witness-client.ts';
import type { JobsOptions } from '../analyzers/jobs.ts';
import type { Config } from '../platform/config.ts';
import { AppError, badRequest } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import { readOrCreate } from './state-file.ts';

/** Where the generated key lives when AUDIT_LOG_SIGNING_KEY is not set. */
export function signingKeyPath(config: Config): string {
  return join(config.auditLog.dir, 'signing-key.pem');
}

/** A key being retired by `tool-audit audit-log rotate-key`: it cosigns the next checkpoint. */
export function retiringKeyPath(config: Config): string {
  return join(config.auditLog.dir, 'signing-key.retiring.pem');
}

/** Where earlier versions kept the key: inside the data directory. */
const legacyKeyPath = (config: Config) => join(config.clickhouse.dataDir, 'tool-audit-state', 'audit-log-signing-key.pem');

/** An Ed25519 private key from PEM or base64 PKCS#8 DER text. */
export function privateKeyFrom(text: string, what: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(text.includes('-----BEGIN') ? text : { key: Buffer.from(text, 'base64'), format: 'der', type: 'pkcs8' });
  } catch (err) {
    throw new AppError('CONFIG_INVALID', `${what} is not a private key: ${(err as Error).message}`, { retryable: false });
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new AppError('CONFIG_INVALID', `${what} must be an Ed25519 key, not ${key.asymmetricKeyType}`, { retryable: false });
  return key;
}

/** A new Ed25519 private key as PEM. */
export const newSigningKeyPem = (): string => generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

/** The process's signing key (made on first start when none is configured). */
export async function loadSigningKey(config: Config, logger: Logger): Promise<KeyObject> {
  const a = config.auditLog;
  if (a.signingKey) return privateKeyFrom(a.signingKey, 'AUDIT_LOG_SIGNING_KEY');
  const path = signingKeyPath(config);
  const legacy = legacyKeyPath(config);
  if (!existsSync(path) && existsSync(legacy)) {
    await mkdir(a.dir, { recursive: true, mode: 0o700 });
    await rename(legacy, path);
    logger.warn({ from: legacy, to: path }, 'audit log signing key moved out of the data directory; backups of the database taken before carry it: consider `tool-audit audit-log rotate-key`');
  }
  return privateKeyFrom(await readOrCreate(path, newSigningKeyPem), path);
}

/** The builder's options of this process, or undefined when AUDIT_LOG=off. */
export async function auditLogOptions(config: Config, logger: Logger, metrics?: MetricsRegistry): Promise<JobsOptions['auditLog']> {
  const a = config.auditLog;
  if (!a.enabled) return undefined;
  const signingKey = await loadSigningKey(config, logger);
  const retiring = retiringKeyPath(config);
  // The retiring key is deleted once it has cosigned the new key's first checkpoint.
  const rotation = existsSync(retiring) ? { oldKey: privateKeyFrom(await readFile(retiring, 'utf8'), retiring), done: () => rm(retiring, { force: true }) } : undefined;
  logger.info(
    { key_id: keyId(signingKey), public_key: publicKeyText(signingKey), verifier_key: noteVerifierKey(a.origin, signingKey), origin: a.origin, dir: a.dir },
    'audit log signing key (pin its public part or verifier key to check proofs and checkpoints)',
  );
  return {
    signingKey,
    origin: a.origin,
    ledger: fileLedger(a.dir),
    headIntervalMs: a.headIntervalMs,
    graceMs: a.graceMs,
    ...(rotation ? { rotation } : {}),
    ...(a.witnessUrls.length ? { witnesses: httpWitnesses({ urls: a.witnessUrls, logger, ...(metrics ? { metrics } : {}) }) } : {}),
  };
}

/** A public key given on a command line, as text or a file: base64 DER, PEM, or a note verifier key. */
export function publicKeyArg(text: string): KeyObject {
  const t = existsSync(text) ? readFileSync(text, 'utf8').trim() : text.trim();
  if (/^[^+\s]+\+[0-9a-f]{8}\+/.test(t)) {
    const k = parseVerifierKey(t);
    if (typeof k === 'string') throw badRequest(`--public-key: ${k}`);
    return k.key;
  }
  try {
    return publicKeyFrom(t);
  } catch (err) {
    throw new AppError('BAD_REQUEST', `--public-key is no public key: ${(err as Error).message}`, { retryable: false, cause: err });
  }
}
