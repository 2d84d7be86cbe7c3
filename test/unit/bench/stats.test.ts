/**
 * The benches' order statistics against values worked out by hand: nearest-rank quantiles (the
 * smallest value with at least a share q at or below it) and medians of odd and even counts.
 */
import { describe, expect, it } from 'vitest';
import { median, percentiles, quantile } from '../../../bench/stats.ts';

describe('bench statistics', () => {
  it('takes quantiles by nearest rank, whatever the input order', () => {
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 … 1
    expect(quantile(hundred, 0.95)).toBe(95);
    expect(quantile(hundred, 0.5)).toBe(50);
    expect(quantile(hundred, 0.99)).toBe(99);
    expect(quantile(hundred, 1)).toBe(100);
    expect(quantile([7, 3, 5], 0.5)).toBe(5); // rank ceil(1.5) = 2
    expect(quantile([7, 3, 5], 0.34)).toBe(5); // rank ceil(1.02) = 2
    expect(quantile([7, 3, 5], 0.33)).toBe(3);
    expect(quantile(new Float64Array([4, 1, 2, 3]), 0.75)).toBe(3);
    expect(quantile([], 0.5)).toBeNaN();
    expect(percentiles([10, 20, 30, 40])).toEqual({ p50: 20, p95: 40, p99: 40 });
  });

  it('takes the middle value, or the mean of the two middle values', () => {
    expect(median([9, 1, 5])).toBe(5);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([2])).toBe(2);
    expect(median([])).toBeNaN();
  });

  it('leaves its input as it was', () => {
    const xs = [3, 1, 2];
    median(xs);
    quantile(xs, 0.5);
    expect(xs).toEqual([3, 1, 2]);
  });
});
