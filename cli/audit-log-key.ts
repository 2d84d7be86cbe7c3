/**
 * The audit log's signing key (issue 30): AUDIT_LOG_SIGNING_KEY (an Ed25519 private key, PEM), or
 * a key this process keeps in its state folder, made on first start. Its public part is logged at
 * every start and stored with every head: pin it where the database cannot change it — proofs are
 * checked against the key you give `tool-audit verify-proof`, not the one a proof carries.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { join } from 'node:path';
import type { Config } from '../platform/config.ts';
import { AppError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import { keyId, publicKeyText } from '../analyzers/audit-log/heads.ts';
import { readOrCreate } from './state-file.ts';

/** Where the generated key lives when AUDIT_LOG_SIGNING_KEY is not set. */
export function signingKeyPath(config: Config): string {
  return join(config.clickhouse.dataDir, 'tool-audit-state', 'audit-log-signing-key.pem');
}

/** The builder's options of this process, or undefined when AUDIT_LOG=off. */
export async function auditLogOptions(config: Config, logger: Logger): Promise<{ signingKey: KeyObject; headIntervalMs: number; graceMs: number } | undefined> {
  const a = config.auditLog;
  if (!a.enabled) return undefined;
  const pem = a.signingKey ?? (await readOrCreate(signingKeyPath(config), () => generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()));
  let signingKey: KeyObject;
  try {
    signingKey = createPrivateKey(pem.includes('-----BEGIN') ? pem : { key: Buffer.from(pem, 'base64'), format: 'der', type: 'pkcs8' });
  } catch (err) {
    throw new AppError('CONFIG_INVALID', `AUDIT_LOG_SIGNING_KEY is not a private key: ${(err as Error).message}`, { retryable: false });
  }
  if (signingKey.asymmetricKeyType !== 'ed25519') throw new AppError('CONFIG_INVALID', `the audit log signing key must be Ed25519, not ${signingKey.asymmetricKeyType}`, { retryable: false });
  logger.info({ key_id: keyId(signingKey), public_key: publicKeyText(signingKey) }, 'audit log signing key (pin its public part to check proofs)');
  return { signingKey, headIntervalMs: a.headIntervalMs, graceMs: a.graceMs };
}
