/**
 * A small JSON parser that keeps every number literal verbatim (as {@link RawNumber}), so the
 * canonical args of a packet written by a Python producer (`1.0`, `1e+16`, integers past 2^53)
 * hash exactly as the producer hashed them. It is only used when the fast path (JSON.parse)
 * cannot reproduce a packet's args_hash, so clarity wins over speed here.
 */
import { RawNumber, type JsonValue } from './canonical-json.ts';
import { RawJson } from './raw-json.ts';

/** Parses JSON text, keeping number literals; returns undefined on malformed input. */
export function parseLossless(text: string): JsonValue | undefined {
  const p = new Parser(text);
  try {
    p.ws();
    const v = p.value();
    p.ws();
    return p.pos === text.length ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Parses JSON text as JSON.parse does (numbers as JavaScript numbers), except the values of
 * object members named in `rawKeys`, at any depth, which are kept as their exact text
 * ({@link RawJson}; a `null` stays null). What a client of the read API uses so that `args`
 * come back as the server sent them. Returns undefined on malformed input.
 */
export function parseKeepingRaw(text: string, rawKeys: ReadonlySet<string>): unknown {
  const p = new Parser(text, rawKeys);
  try {
    p.ws();
    const v = p.value();
    p.ws();
    return p.pos === text.length ? v : undefined;
  } catch {
    return undefined;
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

class Parser {
  pos = 0;
  /** rawKeys given: numbers are JavaScript numbers and the values of those keys RawJson. */
  constructor(
    private readonly s: string,
    private readonly rawKeys?: ReadonlySet<string>,
  ) {}

  ws(): void {
    while (this.pos < this.s.length) {
      const c = this.s.charCodeAt(this.pos);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return;
      this.pos++;
    }
  }

  value(): JsonValue {
    const c = this.s[this.pos];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return this.string();
    if (this.s.startsWith('true', this.pos)) return this.literal(4, true);
    if (this.s.startsWith('false', this.pos)) return this.literal(5, false);
    if (this.s.startsWith('null', this.pos)) return this.literal(4, null);
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.s);
    if (!m) throw new SyntaxError(`unexpected character at ${this.pos}`);
    this.pos += m[0].length;
    return this.rawKeys ? Number(m[0]) : new RawNumber(m[0]);
  }

  private literal(len: number, v: boolean | null): JsonValue {
    this.pos += len;
    return v;
  }

  private object(): JsonValue {
    const out: Record<string, JsonValue> = {};
    this.pos++;
    this.ws();
    if (this.s[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s[this.pos] !== '"') throw new SyntaxError('expected key');
      const key = this.string();
      this.ws();
      if (this.s[this.pos++] !== ':') throw new SyntaxError('expected :');
      this.ws();
      const v = this.rawKeys?.has(key) ? this.raw() : this.value();
      // As JSON.parse: "__proto__" is an own member, not the object's prototype.
      if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      else out[key] = v;
      this.ws();
      const c = this.s[this.pos++];
      if (c === '}') return out;
      if (c !== ',') throw new SyntaxError('expected , or }');
    }
  }

  private raw(): JsonValue {
    const start = this.pos;
    const v = this.value();
    return v === null ? null : (new RawJson(this.s.slice(start, this.pos)) as unknown as JsonValue);
  }

  private array(): JsonValue {
    const out: JsonValue[] = [];
    this.pos++;
    this.ws();
    if (this.s[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.ws();
      out.push(this.value());
      this.ws();
      const c = this.s[this.pos++];
      if (c === ']') return out;
      if (c !== ',') throw new SyntaxError('expected , or ]');
    }
  }

  private string(): string {
    // Find the closing quote, then let JSON.parse decode escapes exactly as the spec says.
    let i = this.pos + 1;
    for (;;) {
      const c = this.s.charCodeAt(i);
      if (Number.isNaN(c)) throw new SyntaxError('unterminated string');
      if (c === 0x5c) i += 2;
      else if (c === 0x22) break;
      else i++;
    }
    const lit = this.s.slice(this.pos, i + 1);
    this.pos = i + 1;
    return JSON.parse(lit) as string;
  }
}

/**
 * Splits a JSON array's text into the raw text of its top-level elements, without decoding
 * them, so each packet of an HTTP batch keeps its exact bytes. Returns undefined when the
 * text is not a well-formed JSON array.
 */
export function splitJsonArray(text: string): string[] | undefined {
  const p = new Parser(text);
  try {
    p.ws();
    if (text[p.pos] !== '[') return undefined;
    p.pos++;
    p.ws();
    const out: string[] = [];
    if (text[p.pos] === ']') {
      p.pos++;
    } else {
      for (;;) {
        p.ws();
        const start = p.pos;
        p.value();
        out.push(text.slice(start, p.pos));
        p.ws();
        const c = text[p.pos++];
        if (c === ']') break;
        if (c !== ',') return undefined;
      }
    }
    p.ws();
    return p.pos === text.length ? out : undefined;
  } catch {
    return undefined;
  }
}
