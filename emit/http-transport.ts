/**
 * Delivers packet batches to a tool-audit server's `POST /v1/packets` (SPEC §6) as NDJSON.
 * A 200 means every packet is durable or was rejected for a reason a retry cannot fix (it is
 * quarantined there), so per-packet rejections are counted, never resent.
 */
import { errorMessage } from '../platform/errors.ts';
import { DeliveryError, type PacketTransport, type SendReceipt } from './transport.ts';

/** Where the tool-audit server is. */
export interface HttpTransportOptions {
  /** Base URL, e.g. `https://audit.internal:8080`; packets go to `${url}/v1/packets`. */
  url: string;
  /** An API key with the `ingest` scope, sent as `Authorization: Bearer …`. */
  apiKey?: string;
  /** Per-request timeout; default 10 000 ms. */
  requestTimeoutMs?: number;
  /** A fetch implementation; default the global one. */
  fetch?: typeof fetch;
}

// Sending the same body again cannot fix these (400 malformed, 401/403 credentials, 413 size …).
const RETRYABLE_STATUS = new Set([408, 425, 429]);

/** Creates an HTTP {@link PacketTransport}. */
export function createHttpTransport(options: HttpTransportOptions): PacketTransport {
  const endpoint = `${options.url.replace(/\/+$/, '')}/v1/packets`;
  const doFetch = options.fetch ?? fetch;
  const headers: Record<string, string> = { 'content-type': 'application/x-ndjson' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

  return {
    async send(batch) {
      let res: Response;
      try {
        res = await doFetch(endpoint, {
          method: 'POST',
          headers,
          body: batch.map((m) => m.value).join('\n'),
          signal: AbortSignal.timeout(options.requestTimeoutMs ?? 10_000),
        });
      } catch (err) {
        throw new DeliveryError(`POST ${endpoint} failed: ${errorMessage(err)}`, { retryable: true, cause: err });
      }
      const text = await res.text().catch(() => '');
      if (res.status < 200 || res.status > 299) {
        const retryable = res.status >= 500 || RETRYABLE_STATUS.has(res.status);
        throw new DeliveryError(`POST ${endpoint} answered ${res.status}: ${text.slice(0, 300)}`, { retryable });
      }
      return receiptOf(text);
    },
    close: () => Promise.resolve(),
  };
}

/** Reads the per-packet verdicts of a 200 answer; an answer without them counts as all taken. */
function receiptOf(text: string): SendReceipt {
  let body: { results?: Array<{ status?: unknown; reason?: unknown }> };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return { rejected: 0 };
  }
  const rejected = Array.isArray(body?.results) ? body.results.filter((r) => r?.status === 'rejected') : [];
  return { rejected: rejected.length, reasons: rejected.map((r) => String(r.reason ?? 'rejected')) };
}
