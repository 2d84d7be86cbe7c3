/**
 * Turns a POST /v1/packets body into raw packets, keeping each packet's exact text: a JSON
 * array is split into its elements, NDJSON into its lines. Pure.
 */
import { splitJsonArray } from '../schemas/lossless-json.ts';

/** The packets of a body, or why the body as a whole is unusable (→ 400). */
export type BodyResult = { ok: true; packets: string[] } | { ok: false; error: string };

/**
 * Splits a request body. An array that does not parse is malformed; a body that is one JSON
 * object (pretty-printed or not) is one packet; otherwise NDJSON, whose lines are judged one by
 * one. A body opening with a lone `{` line is a pretty-printed object, never NDJSON: when it does
 * not parse it is refused whole rather than quarantined line by line.
 */
export function splitPacketBody(body: string): BodyResult {
  const text = body.trim();
  if (text === '') return { ok: false, error: 'empty body: send a JSON array of packets or NDJSON' };
  if (text.startsWith('[')) {
    const packets = splitJsonArray(text);
    return packets ? { ok: true, packets } : { ok: false, error: 'malformed JSON: the body is not a well-formed JSON array' };
  }
  if (text.startsWith('{')) {
    if (isJson(text)) return { ok: true, packets: [text] };
    const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
    if (lines[0] === '{') return { ok: false, error: 'malformed JSON: a pretty-printed packet object that does not parse; send one packet, a JSON array, or NDJSON (one packet per line)' };
    return { ok: true, packets: lines };
  }
  return { ok: false, error: 'malformed JSON: expected a JSON array of packets or NDJSON (one packet object per line)' };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
