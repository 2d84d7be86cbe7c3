/**
 * The TabSeparated lines of the rows (rows.ts) as the segments' inserts take them: each segment's
 * columns, a row's line, and the buffer a batch's lines are gathered in. Pure: no I/O.
 */
import { tsvField } from '../platform/clickhouse/tsv.ts';
import type { Accepted, ContentRow, HintRow, InvocationRow, OutputRow, RunRow, TurnRow, WorkflowRow } from './rows.ts';

/** Insert columns of each segment, in the order of {@link rowLine}'s fields. */
export const SEGMENT_COLUMNS = {
  tool_invocations: [
    'call_id',
    'task_id',
    'tool_id',
    'agent_id',
    'orchestrator',
    'instance_id',
    'args',
    'status',
    'duration_ms',
    'result_summary',
    'error',
    'cost_usd',
    'tokens_used',
    'created_at',
    'fingerprint',
    'source',
    'approval',
    'redactions',
  ],
  tool_outputs: ['output_id', 'call_id', 'tool_id', 'content_type', 'content_hash', 'size_bytes', 'sample', 'created_at', 'fingerprint', 'source', 'redactions'],
  tool_workflows: ['task_id', 'preceding_call_id', 'succeeding_call_id', 'preceding_tool_id', 'succeeding_tool_id', 'time_delta_ms', 'data_flow', 'origin', 'fingerprint', 'source'],
  workflow_optimizations: [
    'hint_id',
    'kind',
    'tool_ids',
    'task_ids_sample',
    'evidence',
    'estimated_savings_ms',
    'estimated_savings_usd',
    'window_from',
    'window_to',
    'created_at',
    'origin',
    'fingerprint',
    'source',
  ],
  model_turns: [
    'turn_id',
    'task_id',
    'agent_id',
    'model',
    'provider',
    'input_tokens',
    'output_tokens',
    'cached_input_tokens',
    'cost_usd',
    'cost_source',
    'duration_ms',
    'status',
    'error',
    'requested_tool_calls',
    'trace_id',
    'span_id',
    'created_at',
    'fingerprint',
    'source',
    'messages',
  ],
  agent_runs: ['run_id', 'task_id', 'agent_id', 'name', 'duration_ms', 'status', 'error', 'trace_id', 'span_id', 'parent_span_id', 'created_at', 'fingerprint', 'source'],
} as const satisfies Record<string, ReadonlyArray<keyof InvocationRow | keyof OutputRow | keyof WorkflowRow | keyof HintRow | keyof TurnRow | keyof RunRow>>;

/** Insert columns of `tool_outputs`: an output's line, then the task of its call stamped at commit (null = unknown). */
export const STAMPED_OUTPUT_COLUMNS = [...SEGMENT_COLUMNS.tool_outputs, 'task_id'] as const;

/** Insert columns of `output_contents`, in the order of {@link contentLine}. */
export const CONTENT_COLUMNS = ['content_hash', 'content_type', 'content', 'size_bytes', 'last_seen'] as const satisfies ReadonlyArray<keyof ContentRow>;

/** The TabSeparated line (with its newline) of an accepted packet's row, columns as in {@link SEGMENT_COLUMNS}. */
export function rowLine(a: Accepted): string {
  const f = tsvField;
  if (a.kind === 'invocation') {
    const r = a.row;
    return `${r.call_id}\t${f(r.task_id)}\t${f(r.tool_id)}\t${f(r.agent_id)}\t${r.orchestrator}\t${f(r.instance_id)}\t${f(r.args)}\t${r.status}\t${r.duration_ms}\t${f(r.result_summary)}\t${f(r.error)}\t${f(r.cost_usd)}\t${f(r.tokens_used)}\t${r.created_at}\t${r.fingerprint}\t${f(r.source)}\t${f(r.approval)}\t${f(r.redactions)}\n`;
  }
  if (a.kind === 'output') {
    const r = a.row;
    return `${r.output_id}\t${r.call_id}\t${f(r.tool_id)}\t${r.content_type}\t${r.content_hash}\t${r.size_bytes}\t${f(r.sample)}\t${r.created_at}\t${r.fingerprint}\t${f(r.source)}\t${f(r.redactions)}\n`;
  }
  if (a.kind === 'hint') return hintLine(a.row);
  if (a.kind === 'turn') return turnLine(a.row);
  if (a.kind === 'run') return runLine(a.row);
  const r = a.row;
  return `${f(r.task_id)}\t${r.preceding_call_id}\t${r.succeeding_call_id}\t${f(r.preceding_tool_id)}\t${f(r.succeeding_tool_id)}\t${r.time_delta_ms}\t${f(r.data_flow)}\t${r.origin}\t${r.fingerprint}\t${f(r.source)}\n`;
}

const QUOTED_SPECIAL = /[\\'\t\n\r\0]/g;
const QUOTED_ESCAPES: Record<string, string> = { '\\': '\\\\', "'": "\\'", '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };

/**
 * A TabSeparated field holding an Array(String): `['a','b']`. ClickHouse reads the elements as
 * quoted strings straight from the line, so each is escaped once, as a quoted string (a quote, a
 * backslash and the control characters), and the field is not escaped again as TabSeparated.
 */
export function tsvArray(items: readonly string[]): string {
  return `[${items.map((x) => `'${x.replace(QUOTED_SPECIAL, (c) => QUOTED_ESCAPES[c] as string)}'`).join(',')}]`;
}

/** The TabSeparated line of a `workflow_optimizations` row, columns as in {@link SEGMENT_COLUMNS}. */
function turnLine(r: TurnRow): string {
  const f = tsvField;
  return `${r.turn_id}\t${f(r.task_id)}\t${f(r.agent_id)}\t${f(r.model)}\t${f(r.provider)}\t${f(r.input_tokens)}\t${f(r.output_tokens)}\t${f(r.cached_input_tokens)}\t${f(r.cost_usd)}\t${f(r.cost_source)}\t${r.duration_ms}\t${r.status}\t${f(r.error)}\t${f(r.requested_tool_calls)}\t${r.trace_id}\t${r.span_id}\t${r.created_at}\t${r.fingerprint}\t${f(r.source)}\t${f(r.messages ?? null)}\n`;
}

function runLine(r: RunRow): string {
  const f = tsvField;
  return `${r.run_id}\t${f(r.task_id)}\t${f(r.agent_id)}\t${f(r.name)}\t${r.duration_ms}\t${r.status}\t${f(r.error)}\t${r.trace_id}\t${r.span_id}\t${r.parent_span_id}\t${r.created_at}\t${r.fingerprint}\t${f(r.source)}\n`;
}

function hintLine(r: HintRow): string {
  const f = tsvField;
  return `${r.hint_id}\t${r.kind}\t${tsvArray(r.tool_ids)}\t${tsvArray(r.task_ids_sample)}\t${f(r.evidence)}\t${r.estimated_savings_ms}\t${r.estimated_savings_usd}\t${r.window_from}\t${r.window_to}\t${r.created_at}\t${r.origin}\t${r.fingerprint}\t${f(r.source)}\n`;
}

/** The TabSeparated line of an `output_contents` row, columns as in {@link CONTENT_COLUMNS}. */
export function contentLine(c: ContentRow): string {
  return `${c.content_hash}\t${c.content_type}\t${tsvField(c.content)}\t${c.size_bytes}\t${c.last_seen}\n`;
}

/**
 * Lines of TabSeparated text written straight into a growing Buffer (UTF-8), so rows wait for
 * their insert as bytes outside the JavaScript heap rather than as strings the collector scans.
 */
export class LineBuffer {
  buf: Buffer;
  length = 0;

  /** A buffer of its own ArrayBuffer (transferable between threads), or an existing one holding `length` bytes. */
  constructor(initialBytes = 256 * 1024, existing?: { buf: Buffer; length: number }) {
    this.buf = existing?.buf ?? Buffer.allocUnsafeSlow(initialBytes);
    this.length = existing?.length ?? 0;
  }

  /** Appends a line; it occupies [returned start, this.length). */
  push(line: string): number {
    this.reserve(line.length * 3); // the worst case of UTF-8
    const start = this.length;
    this.length += this.buf.write(line, start, 'utf8');
    return start;
  }

  /** Room for `bytes` more: a buffer twice as large (or large enough) when it lacks it. */
  private reserve(bytes: number): void {
    if (this.buf.length - this.length >= bytes) return;
    const next = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.length + bytes));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }

  /** Appends bytes as they are (text the caller knows needs no escaping). */
  pushBytes(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.buf.set(bytes, this.length);
    this.length += bytes.length;
  }

  /**
   * Appends UTF-8 bytes as one TabSeparated field, escaping them byte by byte (what
   * {@link tsvField} does to the string): no byte of a multi-byte UTF-8 sequence is below 0x80,
   * so the five escaped bytes are never part of one. Runs between escapes are copied whole.
   */
  pushTsvBytes(bytes: Uint8Array): void {
    // Most packets hold none of the five bytes, or only backslashes: native scans (memchr) and
    // copies of the runs between them beat a loop over every byte in JavaScript by far.
    const controls = hasControl(bytes);
    if (!controls && bytes.indexOf(0x5c) < 0) return this.pushBytes(bytes);
    this.reserve(bytes.length * 2);
    const out = this.buf;
    let o = this.length;
    let from = 0;
    if (!controls) {
      // Only backslashes (JSON's own escapes, the usual case): found natively, each doubled.
      for (let i = bytes.indexOf(0x5c); i >= 0; i = bytes.indexOf(0x5c, from)) {
        out.set(bytes.subarray(from, i + 1), o);
        o += i + 1 - from;
        out[o++] = 0x5c;
        from = i + 1;
      }
      out.set(bytes.subarray(from), o);
      this.length = o + bytes.length - from;
      return;
    }
    for (let i = 0; i < bytes.length; i++) {
      const e = TSV_BYTE_ESCAPES[bytes[i] as number];
      if (e === 0) continue;
      if (i > from) {
        out.set(bytes.subarray(from, i), o);
        o += i - from;
      }
      out[o++] = 0x5c;
      out[o++] = e as number;
      from = i + 1;
    }
    if (bytes.length > from) {
      out.set(bytes.subarray(from), o);
      o += bytes.length - from;
    }
    this.length = o;
  }
}

const hasControl = (b: Uint8Array): boolean => b.indexOf(0x0a) >= 0 || b.indexOf(0x09) >= 0 || b.indexOf(0x0d) >= 0 || b.indexOf(0x00) >= 0;

/** For each byte, the letter of its TabSeparated escape after a backslash (0 = written as it is). */
const TSV_BYTE_ESCAPES = (() => {
  const t = new Uint8Array(256);
  t[0x09] = 0x74; // \t
  t[0x0a] = 0x6e; // \n
  t[0x0d] = 0x72; // \r
  t[0x00] = 0x30; // \0
  t[0x5c] = 0x5c; // \\
  return t;
})();
