/**
 * Calls written straight into tool_invocations (bypassing ingest), with the ingested_at a test
 * chooses: the manifest and cache tests need exact created_at ties, late arrivals and slices.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '../../platform/clickhouse/client.ts';

export { rng } from './rng.ts';

/** A call as the manifest and cache tests generate it. */
export interface RawCall {
  call_id: string;
  task_id: string;
  tool_id: string;
  t: number;
  status: 'success' | 'timeout' | 'error' | 'rate_limited' | 'invalid_input';
  duration_ms: number;
  cost_usd: number | null;
  args: Record<string, unknown>;
  args_hash: string;
  /** The error of a failed call (default 'failed'). */
  error?: string;
  /** Default 'A'. */
  agent_id?: string;
}

/** A call with defaults; args_hash is the SHA-256 of the args' sorted JSON, which is what is stored as args (ingest is bypassed). */
export function rawCall(p: Partial<RawCall> & Pick<RawCall, 'tool_id' | 't'>): RawCall {
  const args = p.args ?? {};
  const sorted = sortedJson(args);
  return { call_id: randomUUID(), task_id: '', status: 'success', duration_ms: 100, cost_usd: null, args_hash: createHash('sha256').update(sorted).digest('hex'), ...p, args };
}

const sortedJson = (args: Record<string, unknown>) => JSON.stringify(Object.fromEntries(Object.entries(args).sort(([a], [b]) => (a < b ? -1 : 1))));

/** A time as ClickHouse reads DateTime64(3) text. */
export const chTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

/** Inserts calls with the given ingested_at (without: ClickHouse's clock, as the writer stores them). */
export async function insertCalls(ch: ClickHouseClient, db: string, calls: readonly RawCall[], ingestedMs?: number): Promise<void> {
  if (calls.length === 0) return;
  await ch.insert({
    table: `${db}.tool_invocations`,
    format: 'JSONEachRow',
    values: calls.map((c) => ({
      call_id: c.call_id,
      task_id: c.task_id,
      tool_id: c.tool_id,
      agent_id: c.agent_id ?? 'A',
      orchestrator: 'kernel',
      instance_id: 'kernel',
      // Stored as ingest stores canonical args: args_hash (migration 022) is the SHA-256 of this text.
      args: sortedJson(c.args),
      status: c.status,
      duration_ms: c.duration_ms,
      result_summary: '{}',
      error: c.status === 'success' ? null : (c.error ?? 'failed'),
      cost_usd: c.cost_usd,
      tokens_used: null,
      created_at: chTime(c.t),
      fingerprint: 'f'.repeat(32),
      source: 'test',
      ...(ingestedMs === undefined ? {} : { ingested_at: chTime(ingestedMs) }),
    })),
  });
}

/**
 * Inserts `calls` in `batches` batches, one after another, while `during` runs (a migration racing
 * ingest). Returns what `during` returned and how many batches were in when it ended (the race
 * happened when that is neither 0 nor `batches`), once every batch is in (also when `during` throws).
 */
export async function insertWhile<T>(ch: ClickHouseClient, db: string, calls: readonly RawCall[], batches: number, during: () => Promise<T>): Promise<{ result: T; batchesBefore: number }> {
  const size = Math.ceil(calls.length / batches);
  let done = 0;
  const inserting = (async () => {
    for (; done < batches; done++) await insertCalls(ch, db, calls.slice(done * size, done * size + size));
  })();
  // Every batch is in before this returns or throws: a caller that runs the race again starts alone.
  const ended = await during().then(
    (result) => ({ result, batchesBefore: done }),
    (error: unknown) => ({ error }),
  );
  await inserting;
  if ('error' in ended) throw ended.error;
  return ended;
}
