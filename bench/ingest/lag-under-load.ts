/**
 * How far background jobs trail ingest at full speed: `load` writes while `cycle` runs the jobs
 * every 200 ms and reports their lag (seconds); then one more cycle drains what is left. Shared by
 * bench:analyzer and bench:manifest-audit.
 */
import { quantile } from '../stats.ts';

/** What a run under load measured. */
export interface LagUnderLoad {
  /** Seconds the load took. */
  loadS: number;
  /** Job cycles run while it wrote. */
  cycles: number;
  /** Lags seen, sorted ascending (seconds). */
  lags: number[];
  /** Seconds the last cycle took after the load ended. */
  drainS: number;
}

/** Runs `load` and, while it lasts, `cycle`, which returns the jobs' lag after each run. */
export async function lagUnderLoad(load: () => Promise<void>, cycle: () => Promise<number>): Promise<LagUnderLoad> {
  const lags: number[] = [];
  let writing = true;
  const started = performance.now();
  const loaded = load().then(() => {
    writing = false;
    return (performance.now() - started) / 1000;
  });
  let cycles = 0;
  while (writing) {
    lags.push(await cycle());
    cycles++;
    await new Promise((res) => setTimeout(res, 200));
  }
  const loadS = await loaded;
  const tail = performance.now();
  await cycle();
  const drainS = (performance.now() - tail) / 1000;
  return { loadS, cycles, lags: lags.sort((a, b) => a - b), drainS };
}

/** `p50 x s, max y s` of the lags. */
export function lagText(lags: readonly number[]): string {
  return lags.length ? `p50 ${quantile(lags, 0.5).toFixed(2)} s, max ${Math.max(...lags).toFixed(2)} s` : 'p50 - s, max - s';
}
