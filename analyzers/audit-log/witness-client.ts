/**
 * Sending checkpoints to witnesses. A URL ending in `/add-checkpoint` speaks C2SP tlog-witness:
 * the body is `old <size>`, the consistency proof from that size (one base64 hash a line), a
 * blank line and the checkpoint; a 200 answers the witness's cosignature lines, a 409 the size
 * the witness holds (the request is made again from there, once). Any other URL is an HTTP
 * endpoint that keeps what it is sent: the checkpoint is POSTed as text/plain. A witness that
 * fails is logged and counted; it never stops the log.
 */
import type { Logger } from '../../platform/logger.ts';
import type { MetricsRegistry } from '../../platform/metrics.ts';
import type { TreeRef, WitnessSender } from './signer.ts';
import { AppError, serverRefusal } from '../../platform/errors.ts';

/** Dependencies of {@link httpWitnesses}. */
export interface WitnessDeps {
  urls: string[];
  logger: Logger;
  metrics?: MetricsRegistry;
  /** Per request (default 10 s). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** A {@link WitnessSender} posting to every URL at once. */
export function httpWitnesses(deps: WitnessDeps): WitnessSender {
  const go = deps.fetch ?? fetch;
  const timeoutMs = deps.timeoutMs ?? 10_000;
  const post = (url: string, body: string, type: string) => go(url, { method: 'POST', body, headers: { 'content-type': type }, signal: AbortSignal.timeout(timeoutMs) });

  const tlogWitness = async (url: string, note: string, last: TreeRef | undefined, proofFrom: (size: number) => Promise<Buffer[]>): Promise<string[]> => {
    const size = Number(/\n(\d+)\n/.exec(note)?.[1]);
    const request = async (old: number) => {
      const proof = old > 0 && old < size ? await proofFrom(old) : [];
      return post(url, `old ${old}\n${proof.map((h) => `${h.toString('base64')}\n`).join('')}\n${note}`, 'text/plain; charset=utf-8');
    };
    let res = await request(last?.size ?? 0);
    if (res.status === 409) {
      // The witness holds another size of this log: from there, once.
      const held = Number((await res.text()).trim());
      if (!Number.isInteger(held) || held < 0 || held > size) throw new AppError('SERVER_REFUSED', `409 with a size this log cannot prove from (${held})`, { retryable: false });
      res = await request(held);
    }
    const text = await res.text();
    if (!res.ok) throw witnessRefusal(res.status, text);
    return text.split('\n').filter((l) => l.startsWith('\u2014 '));
  };

  return async (note, last, proofFrom) => {
    const answers = await Promise.allSettled(
      deps.urls.map(async (url) => {
        if (new URL(url).pathname.endsWith('/add-checkpoint')) return tlogWitness(url, note, last, proofFrom);
        const res = await post(url, note, 'text/plain; charset=utf-8');
        if (!res.ok) throw witnessRefusal(res.status, await res.text());
        return [];
      }),
    );
    const lines: string[] = [];
    answers.forEach((a, i) => {
      if (a.status === 'fulfilled') lines.push(...a.value);
      else {
        deps.metrics?.inc('tool_audit_audit_log_witness_failures_total', 'Checkpoints a witness did not take', { witness: deps.urls[i] as string });
        deps.logger.warn({ witness: deps.urls[i], err: String((a.reason as Error)?.message ?? a.reason) }, 'audit log: a witness did not take the checkpoint');
      }
    });
    return lines;
  };
}

/** A witness's refusal: a server error may pass (the next checkpoint tries again), a 4xx will not. */
function witnessRefusal(status: number, text: string): AppError {
  return serverRefusal(status, `${status} ${text.slice(0, 200)}`);
}
