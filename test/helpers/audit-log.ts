/**
 * An audit log on a fresh embedded database for tests: a segment writer, a builder signing into a
 * ledger in a temp folder, and the ledger as verify's witness.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { createAuditLogBuilder } from '../../analyzers/audit-log/builder.ts';
import { fileLedger, readEntries } from '../../analyzers/audit-log/ledger.ts';
import type { VerifyOptions } from '../../analyzers/audit-log/verify.ts';
import type { RawPacket } from '../../ingest/rows.ts';
import { createSegmentWriter } from '../../ingest/segment-writer.ts';
import { silentLogger } from '../../platform/logger.ts';
import { MetricsRegistry } from '../../platform/metrics.ts';
import { createReadQueries } from '../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../queries/sql.ts';
import { doorOf, freshDatabase } from './clickhouse.ts';

/** Retention long enough that nothing a test stores expires. */
export const RETENTION = { tool_call: 3650, output: 3650, dependency: 3650, violation: 3650 };
/** The log's origin in these tests. */
export const ORIGIN = 'tool-audit/witness-test';
let offset = 0;
const kafka = (value: unknown): RawPacket => ({ raw: JSON.stringify(value), source: { kind: 'kafka', topic: 'witness-test', partition: 0, offset: String(offset++) } });

/** A fresh database with a writer, a builder factory, the ledger and the read queries. */
export async function auditLogSetup(name: string) {
  const { ch, db, door } = await freshDatabase(name);
  const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics: new MetricsRegistry(), logger: silentLogger() });
  const dir = mkdtempSync(join(tmpdir(), 'witness-'));
  const ledger = fileLedger(dir);
  const keys = generateKeyPairSync('ed25519');
  const metrics = new MetricsRegistry();
  const builder = (signingKey = keys.privateKey, rotation?: { oldKey: typeof keys.privateKey; done(): Promise<void> }) =>
    createAuditLogBuilder({ clickhouse: door, logger: silentLogger(), metrics, signingKey, origin: ORIGIN, ledger, headIntervalMs: 0, graceMs: 0, stepRows: 64, now: () => Date.now(), ...(rotation ? { rotation } : {}) });
  const witness = (k = [keys.publicKey]): NonNullable<VerifyOptions['witness']> => ({ entries: (on) => readEntries(join(dir, 'checkpoints.jsonl'), on), origin: ORIGIN, keys: k });
  const write = async (packets: unknown[]) => expect((await writer.write(packets.map(kafka))).every((o) => o.status === 'accepted')).toBe(true);
  return { db, door, dir, ledger, keys, metrics, builder, witness, write, queries: createReadQueries(door, db, DEFAULT_QUERY_CONTEXT) };
}

// The builder takes rows up to its clock (no grace here): what is stored next must be later.
export const tick = () => new Promise((r) => setTimeout(r, 20));

