/**
 * The key of the redaction placeholders: REDACTION_KEY, or a key this process keeps in
 * its state folder, made on first start. Every process that redacts must use the same key for the
 * same secret to give the same placeholder (repeats stay repeats); processes on other machines —
 * the compose stack's api and ingest, an emitter — need REDACTION_KEY set to one value.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Config } from '../platform/config.ts';
import { AppError } from '../platform/errors.ts';
import type { RedactionPolicy } from '../schemas/redaction-policy.ts';
import { readOrCreate } from './state-file.ts';

/** Where the generated key lives when REDACTION_KEY is not set. */
export function redactionKeyPath(config: Config): string {
  return join(config.clickhouse.dataDir, 'tool-audit-state', 'redaction.key');
}

/** The policy of this process, or undefined when REDACTION=off. */
export async function resolveRedaction(config: Config): Promise<RedactionPolicy | undefined> {
  const r = config.redaction;
  if (!r.enabled) return undefined;
  const key = r.key ?? (await keyFile(redactionKeyPath(config)));
  return { key, email: r.email, paths: r.paths, patterns: r.patterns };
}

async function keyFile(path: string): Promise<string> {
  const text = (await readOrCreate(path, () => `${randomBytes(32).toString('hex')}\n`)).trim();
  if (text.length >= 16) return text;
  throw new AppError('CONFIG_INVALID', `${path} holds no redaction key (fewer than 16 characters): remove it to make a new one, or set REDACTION_KEY`, { retryable: false });
}
