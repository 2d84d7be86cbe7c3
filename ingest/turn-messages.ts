/**
 * A model turn's messages with their secrets out. The text is a JSON object of a span's message
 * attributes, and their values are most often JSON text themselves (GenAI's message arrays, the
 * AI SDK's prompt): a secret inside is escaped twice (`password=\"…\"`), a shape no text detector
 * reads, and a value under a secret's name (`{"password": "hunter2"}`) is found only by its key.
 * So every JSON text inside is parsed in place, the whole judged as JSON (keys and strings, as a
 * call's args are), and each parsed text written back as JSON text. Messages without a secret are
 * stored as sent. Pure.
 */
import type { Redactor } from '../schemas/redaction-policy.ts';

// A key no message has: it marks where a JSON text was parsed in place (7 characters: shorter
// than any key the redactor scans for secrets, so it is never taken for one).
const PARSED = '\u0000jtext\u0000';

/** `text` (a turn's messages) redacted, each JSON text inside judged as the JSON it holds. */
export function redactMessages(redactor: Redactor, text: string): string {
  const outer = parseJson(text);
  if (outer === undefined) return redactor.text(text);
  const r = redactor.json(expand(outer));
  return r.changed ? JSON.stringify(collapse(r.value)) : text;
}

/** The value with every string holding a JSON array or object replaced by `{PARSED: parsed}`. */
function expand(v: unknown): unknown {
  if (typeof v === 'string') {
    const inner = v.length > 1 && (v[0] === '[' || v[0] === '{') ? parseJson(v) : undefined;
    return inner === undefined ? v : { [PARSED]: expand(inner) };
  }
  if (Array.isArray(v)) return v.map(expand);
  if (v !== null && typeof v === 'object') return mapObject(v as Record<string, unknown>, expand);
  return v;
}

/** The inverse of {@link expand}: each parsed text written back as JSON text. */
function collapse(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(collapse);
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 1 && keys[0] === PARSED) return JSON.stringify(collapse(o[PARSED]));
    return mapObject(o, collapse);
  }
  return v;
}

function mapObject(o: Record<string, unknown>, f: (x: unknown) => unknown): Record<string, unknown> {
  const out = {};
  // defineProperty: a key `__proto__` (JSON.parse makes it an own key) stays a key.
  for (const [k, x] of Object.entries(o)) Object.defineProperty(out, k, { value: f(x), enumerable: true, writable: true, configurable: true });
  return out;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
