/**
 * What a 503 tells a client: which dependency's fault (its code), never the fault's own text —
 * a host, a path, ClickHouse's error with the statement it quotes — which the server logs under
 * the request's id.
 */

/** The message of a 503 for a fault of `code` (an AppError code such as CLICKHOUSE_UNAVAILABLE). */
export function unavailableMessage(code: string | undefined): string {
  return `a service tool-audit depends on is unavailable (${code ?? 'UNAVAILABLE'}); retry later — the server log has the details under this request_id`;
}
