/**
 * The order statistics every bench reports, defined once so that the figures of two benches are
 * computed alike: a quantile is the nearest rank (the smallest value with at least a share q of
 * the values at or below it), and a median
 * of an even count is the mean of the two middle values.
 */

/** The q-quantile of `xs` (0 < q ≤ 1) by nearest rank; NaN when there is none. */
export function quantile(xs: ArrayLike<number>, q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = Array.from(xs).sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] as number;
}

/** The median of `xs`: the middle value, or the mean of the two middle values; NaN when empty. */
export function median(xs: ArrayLike<number>): number {
  if (xs.length === 0) return Number.NaN;
  const s = Array.from(xs).sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** p50, p95 and p99 of `xs` by nearest rank. */
export function percentiles(xs: ArrayLike<number>): { p50: number; p95: number; p99: number } {
  return { p50: quantile(xs, 0.5), p95: quantile(xs, 0.95), p99: quantile(xs, 0.99) };
}
