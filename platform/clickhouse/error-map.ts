/**
 * The one error map of the ClickHouse door (door.ts): what a ClickHouse failure means and whether
 * a retry may help. Pure.
 */
import { AppError, errorMessage } from '../errors.ts';

// ClickHouse codes of the read limits set by settingsClause: TIMEOUT_EXCEEDED, TOO_MANY_ROWS,
// TOO_MANY_ROWS_OR_BYTES, MEMORY_LIMIT_EXCEEDED. Row limits hit again on a retry; time and memory may not.
const LIMIT_CODES = new Set(['159', '158', '396', '241']);
const ROW_LIMIT_CODES = new Set(['158', '396']);
const LIMIT_TEXT = /Timeout exceeded|Limit for result exceeded|Memory limit .* exceeded/i;
// Codes of a statement that is wrong or not allowed: the same statement fails again, so it is a
// bug or a grant to fix (syntax, unknown identifier/setting/parameter, type and parse errors —
// of a value too: an array, a UUID or a Bool that cannot be read —,
// read-only user, access and authentication). Not an unknown table or database (60, 81): one
// detached or being migrated comes back, and ingest holds its offsets until it does.
const STATEMENT_CODES = new Set([
  '1', '6', '26', '27', '36', '38', '41', '42', '43', '44', '46', '47', '48', '53', '62', '70', '72', '115', '117', '164', '192', '194', '215',
  '130', '352', '376', '386', '456', '457', '467', '497', '516',
]);

/** How a failed ad-hoc statement is named in its error: its first line. */
export const statementName = (query: string, what: 'query' | 'statement' = 'query'): string => `${what} (${query.trim().split('\n')[0]?.slice(0, 80)})`;

const TSV_UNESCAPES: Record<string, string> = { t: '\t', n: '\n', r: '\r', '0': '\0', b: '\b', f: '\f', "'": "'", '\\': '\\' };

/** A TabSeparated field as text (ClickHouse escapes \\ \t \n \r \0 \b \f and quotes there). */
export function tsvUnescape(field: string): string {
  return field.includes('\\') ? field.replace(/\\(.)/gs, (_m, c: string) => TSV_UNESCAPES[c] ?? c) : field;
}

/**
 * The one error map: a ClickHouse failure as an AppError. A limit of a read is
 * `CLICKHOUSE_LIMIT_EXCEEDED` (the request asked too much); a statement ClickHouse refuses as
 * wrong or forbidden is `CLICKHOUSE_QUERY_FAILED`, not retryable; anything else (connection
 * refused, timeouts, a busy or overloaded server, too many parts) is `CLICKHOUSE_UNAVAILABLE`,
 * retryable.
 */
export function clickhouseError(err: unknown, what: string): AppError {
  if (err instanceof AppError) return err;
  // A server's error carries ClickHouse's code as `code`; the embedded engine's (chdb's typed errors,
  // e.g. an insert's) carry their own kind there and ClickHouse's code as `clickhouseCode`.
  const e = err as { code?: unknown; clickhouseCode?: unknown } | null;
  const code = String(e?.clickhouseCode ?? e?.code ?? '');
  const message = errorMessage(err);
  if (LIMIT_CODES.has(code) || LIMIT_TEXT.test(message)) {
    const first = message.split('\n')[0]?.slice(0, 200);
    return new AppError('CLICKHOUSE_LIMIT_EXCEEDED', `${what} exceeded a server-side limit (${first}); narrow from/to or lower limit`, {
      retryable: !ROW_LIMIT_CODES.has(code),
      cause: err,
    });
  }
  if (STATEMENT_CODES.has(code)) return new AppError('CLICKHOUSE_QUERY_FAILED', `${what} failed: ${message.slice(0, 500)}`, { retryable: false, cause: err });
  return new AppError('CLICKHOUSE_UNAVAILABLE', `${what} failed: ${message.slice(0, 500)}`, { retryable: true, cause: err });
}
