/**
 * ClickHouse reachability for readiness probes.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { errorMessage } from '../errors.ts';

/** Runs a trivial query; ok=false with the reason when ClickHouse does not answer. */
export async function pingClickHouse(ch: ClickHouseClient): Promise<{ ok: boolean; detail?: string }> {
  try {
    const r = await ch.ping();
    return r.success ? { ok: true } : { ok: false, detail: errorMessage(r.error) };
  } catch (err) {
    return { ok: false, detail: errorMessage(err) };
  }
}
