/**
 * Sparkline series (pure): the bucket width for a window and the dense per-bucket values of a
 * tool's GET /v1/tools/series points (the API returns only buckets with calls).
 */
import type { ToolSeries } from '../../schemas/answers.ts';

/** Buckets of a sparkline. */
export const SPARK_BUCKETS = 48;

/** Bucket width for a window: SPARK_BUCKETS over it, at least a minute (the API's minimum). */
export function bucketSeconds(hours: number): number {
  return Math.max(60, Math.ceil((hours * 3600) / SPARK_BUCKETS / 60) * 60);
}

/** Dense per-bucket values of one tool's series (buckets without calls are 0). */
export function densify(points: ToolSeries['series'][number]['points'], fromMs: number, bucketS: number, buckets: number): { calls: number[]; cost: number[] } {
  const calls = new Array<number>(buckets).fill(0);
  const cost = new Array<number>(buckets).fill(0);
  for (const p of points) {
    const i = Math.min(buckets - 1, Math.max(0, Math.floor((Date.parse(p.time) - fromMs) / (bucketS * 1000))));
    calls[i]! += p.calls;
    cost[i]! += p.cost_usd;
  }
  return { calls, cost };
}
