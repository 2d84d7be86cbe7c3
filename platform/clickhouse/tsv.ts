/**
 * Writing one TabSeparated field, as ClickHouse reads it: ingest's insert lines and the door's key
 * sets (literals.ts). Reading one back is error-map.ts's tsvUnescape. Pure.
 */

const TSV_CONTROL = /[\t\n\r\0]/;
const TSV_CONTROL_ALL = /[\t\n\r\0]/g;
const TSV_ESCAPES: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };
const tsvEscape = (c: string): string => TSV_ESCAPES[c] as string;

/** One field of a TabSeparated line: `\N` for null, backslash escapes for \\ \t \n \r and NUL. */
export function tsvField(v: string | number | null): string {
  if (v === null) return '\\N';
  if (typeof v === 'number') return String(v);
  // Backslashes are common (JSON escapes in args); replaceAll of a literal is far cheaper than a
  // regex with a callback. Control characters are rare.
  const s = v.includes('\\') ? v.replaceAll('\\', '\\\\') : v;
  return TSV_CONTROL.test(s) ? s.replace(TSV_CONTROL_ALL, tsvEscape) : s;
}
