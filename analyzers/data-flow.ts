/**
 * Did an output of call A visibly feed call B's args (SPEC §4 data_flow)? We look for the
 * output itself, or a distinctive value from it (a URL, an id, a JSON string or number leaf),
 * inside B's canonical args text. Pure.
 */
import { pythonJsonString } from '../schemas/canonical-json.ts';

/** What is known of A's output: its type and the first 500 characters (the sample). */
export interface OutputTrace {
  output_id: string;
  content_type: string;
  sample: string;
}

const URL_RE = /https?:\/\/[^\s"'<>\\)\]]+/g;
const MIN_VALUE_CHARS = 6;
const MAX_VALUES = 50;

/** Distinctive values of an output that would show up in a later call's args. */
export function outputValues(o: OutputTrace): string[] {
  const text = o.sample.trim();
  const values = new Set<string>();
  if (o.content_type === 'image_id' || o.content_type === 'chart_id') values.add(text);
  for (const m of text.match(URL_RE) ?? []) values.add(m);
  if (o.content_type === 'json') {
    try {
      collectLeaves(JSON.parse(text), values);
    } catch {
      // A sample may cut JSON short; URLs found above still count.
    }
  }
  if (text.length >= MIN_VALUE_CHARS && text.length <= 200 && !text.includes('\n')) values.add(text);
  return [...values].filter((v) => v.length >= MIN_VALUE_CHARS).slice(0, MAX_VALUES);
}

function collectLeaves(v: unknown, out: Set<string>): void {
  if (out.size >= MAX_VALUES) return;
  if (typeof v === 'string') out.add(v);
  else if (typeof v === 'number' && !Number.isInteger(v)) out.add(String(v));
  else if (Array.isArray(v)) for (const x of v) collectLeaves(x, out);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) collectLeaves(x, out);
}

/** A readable data_flow for the pair, or null when nothing of A's outputs appears in B's args. */
export function detectDataFlow(outputs: readonly OutputTrace[], laterArgs: string): string | null {
  for (const o of outputs) {
    for (const v of outputValues(o)) {
      // Args are canonical JSON (ASCII-escaped): compare against the value as written there.
      const needle = pythonJsonString(v).slice(1, -1);
      if (needle.length >= MIN_VALUE_CHARS && laterArgs.includes(needle)) {
        const shown = v.length > 80 ? `${v.slice(0, 77)}…` : v;
        return `output ${o.output_id} (${o.content_type}) value "${shown}" appears in args`;
      }
    }
  }
  return null;
}
