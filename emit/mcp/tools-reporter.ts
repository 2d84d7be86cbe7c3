/**
 * Reports each complete `tools/list` answer to the tool-audit server (`POST /v1/mcp/tools`),
 * which keeps the server's tools as a manifest version and records redefinitions. In the
 * background, bounded: a list equal to the one last delivered for its server is not sent again
 * (over HTTP every session lists the tools), at most one list per server waits (a newer one
 * replaces it: it carries the same information, newer), and one that cannot be delivered after
 * a few tries is counted and dropped (the next tools/list carries it again).
 */
import type { MinimalLogger } from '../../platform/minimal-logger.ts';
import type { ToolsListSeen } from './audit-session.ts';

/** Counters of the reporter. */
export interface ToolsReportStats {
  reported: number;
  failed: number;
  /** Lists equal to the one last delivered for their server: not sent. */
  unchanged: number;
}

/** What the reporter is built with. */
export interface ToolsReporterOptions {
  url: string;
  apiKey?: string;
  logger: MinimalLogger;
  /** Tries per answer (default 3), each bounded by timeoutMs (default 5 s). */
  attempts?: number;
  timeoutMs?: number;
}

/** A reporter: report() never throws and never blocks the caller. */
export interface ToolsReporter {
  report(seen: ToolsListSeen): void;
  /** Waits for reports in flight (bounded by their own timeouts). */
  drain(): Promise<void>;
  stats(): ToolsReportStats;
}

/** Creates a reporter posting to `<url>/v1/mcp/tools`. */
export function createToolsReporter(o: ToolsReporterOptions): ToolsReporter {
  const endpoint = `${o.url.replace(/\/+$/, '')}/v1/mcp/tools`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (o.apiKey) headers.authorization = `Bearer ${o.apiKey}`;
  const counts: ToolsReportStats = { reported: 0, failed: 0, unchanged: 0 };
  /** Per server: what was last delivered (the list without its time), and the list waiting. */
  const delivered = new Map<string, string>();
  const waiting = new Map<string, { list: string; body: string }>();
  let pumping: Promise<void> | undefined;

  const send = async (body: string): Promise<boolean> => {
    const attempts = o.attempts ?? 3;
    let last = '';
    for (let i = 0; i < attempts; i++) {
      try {
        const res = await fetch(endpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(o.timeoutMs ?? 5_000) });
        const text = await res.text();
        if (res.status === 200) {
          counts.reported++;
          return true;
        }
        last = `${res.status}: ${text.slice(0, 300)}`;
        // A refusal will not change on a retry; a 5xx or 429 may.
        if (res.status < 500 && res.status !== 429) break;
      } catch (err) {
        last = (err as Error).message;
      }
      await new Promise((r) => setTimeout(r, 200 * 2 ** i));
    }
    counts.failed++;
    o.logger.warn({ endpoint, err: last }, 'a tools/list answer could not be reported');
    return false;
  };

  // One list at a time, in order: a later list must not be applied before an earlier one.
  const pump = async (): Promise<void> => {
    for (let next = waiting.entries().next(); !next.done; next = waiting.entries().next()) {
      const [server, w] = next.value;
      waiting.delete(server);
      if (await send(w.body)) delivered.set(server, w.list);
    }
    pumping = undefined;
  };

  return {
    report(seen) {
      const list = JSON.stringify({ server: seen.server, server_info: seen.serverInfo, tools: seen.tools });
      if (!waiting.has(seen.server) && delivered.get(seen.server) === list) {
        counts.unchanged++;
        return;
      }
      waiting.set(seen.server, { list, body: `${list.slice(0, -1)},"seen_at":${JSON.stringify(new Date(seen.seenAtMs).toISOString())}}` });
      pumping ??= pump();
    },
    drain: async () => {
      await pumping;
    },
    stats: () => ({ ...counts }),
  };
}
