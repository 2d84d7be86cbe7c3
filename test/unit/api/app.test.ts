import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../../api/app.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';

/** An app whose log lines are collected (JSON objects). */
function appWithLog(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const app = buildApp({ readiness: async () => ({ ready: true, checks: {} }), metrics: new MetricsRegistry(), apiKeys: [], maxBodyBytes: 1024, logger: pino({ level }, sink) });
  return { app, lines };
}

describe('HTTP app logging', () => {
  it('writes one info line per request, and health, readiness and metrics only at debug', async () => {
    const { app, lines } = appWithLog('info');
    await app.inject('/healthz');
    await app.inject('/readyz');
    await app.inject('/metrics');
    await app.inject('/v1/nope');
    await app.close();
    expect(lines.map((l) => [l.level, l.msg, l.url, l.status])).toEqual([[30, 'request', '/v1/nope', 404]]);
  });

  it('logs the probes too at debug, still one line each', async () => {
    const { app, lines } = appWithLog('debug');
    await app.inject('/healthz');
    await app.inject('/metrics');
    await app.close();
    expect(lines.filter((l) => l.msg === 'request').map((l) => [l.level, l.url])).toEqual([
      [20, '/healthz'],
      [20, '/metrics'],
    ]);
    expect(lines.filter((l) => l.msg !== 'request' && (l.level as number) >= 30)).toEqual([]);
  });
});
