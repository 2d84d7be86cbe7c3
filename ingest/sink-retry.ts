/**
 * Writes to the segment writer until they succeed: a ClickHouse fault (retryable AppError) is
 * retried with capped exponential back-off while the caller still owns the packets; any other
 * failure is thrown. Tracks for how long writes have failed, for the worker's health.
 */
import { errorMessage, isRetryable } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import type { PacketOutcome, RawPacket } from './ports.ts';
import type { SegmentWriter } from './segment-writer.ts';

/** A retrying view of a segment writer. */
export interface SinkRetry {
  /** The outcomes, or undefined when `givenUp()` turned true while retrying (nothing was committed). */
  write(packets: RawPacket[], givenUp: () => boolean): Promise<PacketOutcome[] | undefined>;
  /** Unhealthy once writes have failed for longer than `unhealthyAfterMs`. */
  health(): { ok: boolean; detail?: string };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Wraps a writer. */
export function createSinkRetry(deps: { writer: SegmentWriter; logger: Logger; metrics: MetricsRegistry; retryMaxMs: number; unhealthyAfterMs: number }): SinkRetry {
  const { writer, logger, metrics } = deps;
  let failingSince: number | undefined;
  let lastError = '';
  return {
    async write(packets, givenUp) {
      let delay = 100;
      for (;;) {
        try {
          const out = await writer.write(packets);
          if (failingSince !== undefined) logger.info({ downForMs: Date.now() - failingSince }, 'ClickHouse writes recovered');
          failingSince = undefined;
          return out;
        } catch (err) {
          if (!isRetryable(err)) throw err;
          failingSince ??= Date.now();
          lastError = errorMessage(err);
          metrics.inc('tool_audit_ingest_write_retries_total', 'Failed segment writes that will be retried');
          logger.warn({ err: lastError, retryInMs: delay }, 'segment write failed; offsets held, retrying');
          await sleep(delay);
          delay = Math.min(delay * 2, deps.retryMaxMs);
          // Nothing was committed: on stop or a lost assignment, the next owner starts from here.
          if (givenUp()) return undefined;
        }
      }
    },
    health() {
      if (failingSince !== undefined && Date.now() - failingSince > deps.unhealthyAfterMs) {
        return { ok: false, detail: `ClickHouse writes failing for ${Math.round((Date.now() - failingSince) / 1000)} s: ${lastError}` };
      }
      return { ok: true };
    },
  };
}
