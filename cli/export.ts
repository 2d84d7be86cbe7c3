/**
 * `tool-audit export [--kind calls|outputs|dependencies|violations] [--from ISO] [--to ISO] [--task T]
 * [--format ndjson|csv|parquet] [--out FILE] [--url URL]`: the rows GET /v1/export serves, written
 * to FILE (or standard output) as they come. From a running server (--url / TOOL_AUDIT_URL), else
 * from ClickHouse directly. Exit 0 when the whole export was written, 1 when it broke off (the
 * partial file is removed), 2 on a usage error.
 */
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import { pipeline } from 'node:stream/promises';
import { issuesText, windowOf } from '../api/read-params.ts';
import { exportQuerySchema } from '../api/routes/export.ts';
import { serverRefusal } from '../platform/errors.ts';
import { exportRows } from '../queries/export.ts';
import { configOrExit, startRuntime } from './runtime.ts';
import { parseArgs } from './task.ts';
import { USAGES } from './usage.ts';

/** `tool-audit export`; resolves to the exit status. */
export async function exportCommand(argv: string[]): Promise<number> {
  const { flags } = parseArgs(argv);
  const { out, url: urlFlag, ...query } = flags;
  const q = exportQuerySchema.safeParse(query);
  if (!q.success) {
    process.stderr.write(`tool-audit export: ${issuesText(q.error)}\n${USAGES.export}\n`);
    return 2;
  }
  const config = configOrExit();
  let window;
  try {
    window = windowOf(q.data, { windowDays: config.queries.defaultWindowDays, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 });
  } catch (err) {
    process.stderr.write(`tool-audit export: ${(err as Error).message}\n`);
    return 2;
  }
  const url = urlFlag ?? config.client.url;
  const sink: Writable = out ? createWriteStream(out) : process.stdout;
  try {
    if (url) {
      const target = new URL('/v1/export', url);
      for (const [k, v] of Object.entries(query)) target.searchParams.set(k, v);
      const res = await fetch(target, { headers: config.client.apiKey ? { authorization: `Bearer ${config.client.apiKey}` } : {} });
      if (!res.ok || !res.body) throw serverRefusal(res.status, `${res.status} ${await res.text()}`);
      await pipeline(Readable.fromWeb(res.body as ReadableStream<Uint8Array>), sink);
    } else {
      const rt = await startRuntime('tool-audit-export');
      try {
        await pipeline(Readable.from(exportRows(rt.clickhouse.lane('job'), q.data, window), { objectMode: false }), sink);
      } finally {
        await rt.clickhouse.close();
      }
    }
    return 0;
  } catch (err) {
    process.stderr.write(`tool-audit export: broke off: ${(err as Error).message}\n`);
    if (out) await rm(out, { force: true });
    return 1;
  }
}
