/**
 * `{name:Type}` placeholders rendered as typed, escaped SQL literals. Pure: the door
 * (door.ts) is its only caller, and nothing else writes values into SQL text.
 *
 * One type is the door's own: `{name:KeySet(UUID)}` or `{name:KeySet(String)}`, an array of keys
 * rendered as `(SELECT k FROM format(TSV, 'k Type', '…'))`, for `x IN {name:KeySet(UUID)}` with
 * tens of thousands of keys. It is rendered even where the door binds the other values: bound as
 * an Array parameter, 50,000 UUIDs cost ~3× as much on a server, and on embedded ClickHouse
 * (chDB) an Array(String) parameter of 50,000 keys took 198 s where the literal took 90 ms.
 *
 * Why: chdb-node runs every statement that carries query parameters through one process-wide
 * chain (libchdb's parameter set/reset is not isolated per connection), so bound statements of
 * separate connections still run one at a time. A statement whose values are literals takes the
 * plain path, and the connections of the embedded engine run side by side.
 *
 * The rendering keeps the bound path's meaning: a value reaches the engine as text that the
 * engine parses as the placeholder's type (`CAST('text' AS Type)`), as a bound parameter is
 * parsed from its text; a `String` is a plain string literal; an `Identifier` is one quoted
 * identifier, dots included, as the engine quotes a bound one. Escaping: a literal holds no
 * quote, backslash or control character unescaped, so no value can end it early.
 */
import { AppError } from '../errors.ts';
import { tsvField } from './tsv.ts';

/** A placeholder at the start of the rest: `{name:Type}` (spaces allowed around both). */
const PLACEHOLDER = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}]+?)\s*\}/y;
/** What a type text may hold: names, numbers, quoted time zones, commas and parentheses. */
const TYPE_TEXT = /^[A-Za-z0-9_(), ']+$/;

/** Whether a placeholder's type is a key set (rendered by the door whatever it does with the rest). */
export const isKeySet = (type: string): boolean => /^KeySet\((UUID|String)\)$/.test(type);

/**
 * The statement `sql` with each placeholder outside strings, quoted names and comments replaced by
 * its value's literal; with `only`, just the placeholders whose type it accepts (the others stay).
 */
export function renderStatement(sql: string, params: Readonly<Record<string, unknown>>, only?: (type: string) => boolean): string {
  let out = '';
  let from = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"' || c === '`') i = quotedEnd(sql, i, c);
    else if (c === '-' && sql[i + 1] === '-') i = lineEnd(sql, i);
    else if (c === '/' && sql[i + 1] === '*') i = blockEnd(sql, i);
    else if (c === '{') {
      PLACEHOLDER.lastIndex = i;
      const m = PLACEHOLDER.exec(sql);
      if (!m) {
        i++;
        continue;
      }
      const [whole, name, type] = m as unknown as [string, string, string];
      if (only && !only(type)) {
        i += whole.length;
        continue;
      }
      if (!Object.hasOwn(params, name)) throw badParameter(`query parameter '${name}' of type ${type} is not set`);
      out += sql.slice(from, i) + literalOf(type, params[name], name);
      i += whole.length;
      from = i;
    } else i++;
  }
  return out + sql.slice(from);
}

/** The SQL literal of `value` as a `type` placeholder would bind it. */
export function literalOf(type: string, value: unknown, name = 'value'): string {
  if (!TYPE_TEXT.test(type)) throw badParameter(`query parameter '${name}' has an unsupported type ${type}`);
  if (type === 'Identifier') {
    if (typeof value !== 'string' || value === '') throw badParameter(`query parameter '${name}' must be a non-empty identifier`);
    return `\`${escapeText(value, '`')}\``;
  }
  if (type === 'String') return stringLiteral(textOf(value, name));
  if (isKeySet(type)) return keySetLiteral(type.slice(7, -1) as 'UUID' | 'String', value, name);
  return `CAST(${valueLiteral(type, value, name)} AS ${type})`;
}

const UUID_TEXT = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** `(SELECT k FROM format(TSV, 'k Type', '…'))` of the keys; a UUID key must be one. */
function keySetLiteral(type: 'UUID' | 'String', value: unknown, name: string): string {
  if (!Array.isArray(value) || !value.every((k) => typeof k === 'string')) throw badParameter(`query parameter '${name}' of type KeySet(${type}) must be an array of strings`);
  if (type === 'UUID' && !value.every((k) => UUID_TEXT.test(k as string))) throw badParameter(`query parameter '${name}' of type KeySet(UUID) holds a key that is not a UUID`);
  const keys = value as string[];
  // A UUID (checked above) holds nothing to escape: its rows go straight between the quotes, `\n`
  // between them. Other keys: each a TSV field, one per row, the rows one string literal (its
  // escapes keep them whole). Escaping 50,000 UUIDs as text cost ~2× the whole literal.
  const rows = type === 'UUID' ? `'${keys.join('\\n')}'` : stringLiteral(keys.map(tsvField).join('\n'));
  return `(SELECT k FROM format(TSV, 'k ${type}', ${rows}))`;
}

/** A value inside the CAST of its type: text as a string literal, arrays element by element, null as NULL. */
function valueLiteral(type: string, value: unknown, name: string): string {
  if (value === null || value === undefined) return 'NULL';
  const element = /^Array\((.*)\)$/.exec(type)?.[1];
  if (element !== undefined) {
    if (!Array.isArray(value)) throw badParameter(`query parameter '${name}' of type ${type} must be an array`);
    return `[${value.map((v) => valueLiteral(element, v, name)).join(',')}]`;
  }
  return stringLiteral(textOf(value, name));
}

/** The text a value is parsed from, as chdb-node and @clickhouse/client send a bound value. */
function textOf(value: unknown, name: string): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'number':
      if (!Number.isFinite(value)) throw badParameter(`query parameter '${name}' is not a finite number (${value})`);
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) throw badParameter(`query parameter '${name}' is an integer beyond 2^53: pass a bigint or a string`);
      return String(value);
  }
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString().replace('T', ' ').replace('Z', '');
  throw badParameter(`query parameter '${name}' cannot be sent as SQL text (${value === null ? 'null' : typeof value})`);
}

// Escapes of a quoted literal: the quote and the backslash, and every control character as \xHH
// (a NUL or a newline never stands raw in the statement).
const ESCAPES: Record<string, string> = { '\\': '\\\\', "'": "\\'", '`': '\\`' };

function escapeText(text: string, quote: "'" | '`'): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is escaped
  return text.replace(quote === "'" ? /[\\'\x00-\x1f\x7f]/g : /[\\`\x00-\x1f\x7f]/g, (ch) => ESCAPES[ch] ?? `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

function stringLiteral(text: string): string {
  return `'${escapeText(text, "'")}'`;
}

/** The end of a quoted string or name opened at `start` (backslash escapes and doubled quotes). */
function quotedEnd(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i];
    if (c === '\\') i += 2;
    else if (c === quote) {
      if (sql[i + 1] !== quote) return i + 1;
      i += 2;
    } else i++;
  }
  return i;
}

function lineEnd(sql: string, start: number): number {
  const end = sql.indexOf('\n', start);
  return end < 0 ? sql.length : end + 1;
}

function blockEnd(sql: string, start: number): number {
  const end = sql.indexOf('*/', start + 2);
  return end < 0 ? sql.length : end + 2;
}

/** A statement that cannot be rendered: a bug of its caller, as an unset parameter is for the engine. */
function badParameter(message: string): AppError {
  return new AppError('CLICKHOUSE_QUERY_FAILED', message, { retryable: false });
}
