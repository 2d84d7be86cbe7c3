/**
 * A job that keeps failing says so: its health counts failures in a row, /readyz
 * shows it failing after JOB_FAILING_AFTER runs without making the process unready, the log
 * tells at 1, 10, 100 failures in a row, and one run that works clears it.
 */
import { describe, expect, it } from 'vitest';
import { JOB_FAILING_AFTER } from '../../../analyzers/jobs.ts';
import { periodic, type JobHealth } from '../../../analyzers/scheduler.ts';
import { jobsReport } from '../../../api/routes/health.ts';
import type { Logger } from '../../../platform/logger.ts';

function recordingLogger(lines: string[]): Logger {
  const log = (_o: unknown, msg?: string) => void lines.push(msg ?? String(_o));
  return { info: log, warn: log, error: log, debug: () => undefined, fatal: log, trace: () => undefined, child: () => recordingLogger(lines) } as unknown as Logger;
}

describe('periodic job health', () => {
  it('counts failures in a row, logs at 1 and 10, reports failing from the third, and clears on success', async () => {
    const lines: string[] = [];
    let fail = true;
    let runs = 0;
    const job = periodic(
      'auditor',
      async () => {
        runs++;
        if (fail) throw new Error(`slice ${runs} cannot be read`);
        return runs;
      },
      recordingLogger(lines),
    );
    const seen: JobHealth[] = [];
    let wake: () => void = () => undefined;
    job.start(1, (h) => {
      seen.push(h);
      wake();
    });
    const until = (n: number) => new Promise<void>((r) => (wake = () => seen.length >= n && r()));
    await until(12);
    expect(seen.slice(0, 12).map((h) => h.failures)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(jobsReport([seen[JOB_FAILING_AFTER - 1] as JobHealth])).toEqual({ auditor: { ok: false, failures: JOB_FAILING_AFTER, detail: `slice ${JOB_FAILING_AFTER} cannot be read` } });
    expect(jobsReport([seen[JOB_FAILING_AFTER - 2] as JobHealth]).auditor?.ok).toBe(true);
    expect(lines.filter((l) => l.includes('cycle failed'))).toHaveLength(2);
    fail = false;
    const before = seen.length;
    await until(before + 2);
    await job.stop();
    const healed = seen.find((h, i) => i >= before && h.failures === 0);
    expect(healed?.lastError).toBeUndefined();
    expect(healed?.lastOkAt).toBeGreaterThan(0);
    expect(job.health()).toMatchObject({ name: 'auditor', failures: 0 });
    expect(lines.some((l) => l.includes('works again'))).toBe(true);
  });
});
